// probe/synth.h — the probe kernels, as LLVM IR text. No LLVM needed: a resolved declaration carries its
// types as text, so sweep variants are made without asking LLVM again.
//
// A probe kernel takes the declaration's ordinary operands as kernel arguments (real SSA values the
// compiler cannot fold) and makes the data among them divergent by mixing in the work-item id, as a kernel's
// per-lane data is (pointers stay uniform, as buffer descriptors and addresses are); it passes constants for
// immarg operands and the node !{!""} for metadata operands (a
// scope by name; "" is the system scope), and stores the result volatile:
//   define amdgpu_kernel void @p7(ptr addrspace(1) %out, <4 x i16> %a0, ...) {
//     %r = call <4 x float> @"llvm.amdgcn.mfma..."(<4 x i16> %a0, ..., i32 0, i32 0, i32 0)
//     store volatile <4 x float> %r, ptr addrspace(1) %out
//     ret void }
// Its baseline is the same kernel without the call: every operand used by an empty inline-asm statement,
// and one more kernel argument of the result type stored as the result is. What the probe emits beyond its
// baseline is what the call became.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/column.h"

namespace archdb {

struct Operand {
  std::string type;  // IR syntax
  bool immarg = false;
};

struct ProbeShape {
  std::string callee;        // the name the kernel calls, as declared
  std::string declare_line;  // "declare <ret> @\"name\"(<params>)"
  std::string return_type;   // IR syntax; "void" for none
  std::vector<std::string> return_fields;  // element types when the result is a literal struct
  std::vector<Operand> params;
  // The intrinsic may write memory or has other side effects: its result may go unused (a no-return form,
  // such as a buffer atomic whose old value a kernel ignores) without the call being dead.
  bool has_side_effects = false;

  bool has_int_immarg() const;
  size_t immarg_count() const;
};

// How a probe kernel poses the call (docs/measuring.md "How the probe measures"). The default: every immarg operand the
// key's default immediate, ordinary operands divergent, the result stored.
struct Posing {
  std::vector<int64_t> imm;    // one value per immarg operand, in order
  bool uniform = false;        // ordinary operands passed as the kernel receives them (uniform, in SGPRs)
  bool result_unused = false;  // the result is not used (the call stays: it has side effects)

  static Posing all(const ProbeShape& shape, int64_t imm);  // every immarg operand `imm`
  bool operator==(const Posing& o) const {
    return imm == o.imm && uniform == o.uniform && result_unused == o.result_unused;
  }
  // What differs from `base`, for cells and evidence: "immediates 1, 0, 0", "uniform operands", "result unused".
  std::string describe(const Posing& base) const;
};

// The posing a key is first probed with: every immarg operand `imm` (the key's default immediate), ordinary
// operands divergent, the result stored; but an image intrinsic's dmask (its first immarg operand; image atomics
// and BVH intersections have none) is 1, one channel, when `imm` is 0: a dmask of 0 loads nothing, the call
// folds away, and every processor would need a second posing to be asked for work.
Posing default_posing(const ProbeShape& shape, int64_t imm);

// The immediate written for an immarg operand of `type` when probing with `value`.
std::string immarg_constant(const std::string& type, int64_t value);
// The kernel that calls the declaration once, posed as `posing` says (or with every immarg operand `imm`).
std::string probe_kernel_ir(const std::string& function_name, const ProbeShape& shape, const Posing& posing);
std::string probe_kernel_ir(const std::string& function_name, const ProbeShape& shape, int64_t imm);
// What of `posing` the text of its probe kernel depends on (the immediates as written, uniform operands where
// some operand is made divergent, an unused result where there is one): two posings of `shape` write the same
// kernel exactly when their signatures are equal. Small, where the kernel's text is not.
std::string posing_signature(const ProbeShape& shape, const Posing& posing);
// Kernels with the same baseline signature share one baseline; a posing's operands and result are part of it.
std::string baseline_signature(const ProbeShape& shape, const Posing& posing);
std::string baseline_kernel_ir(const std::string& function_name, const ProbeShape& shape, const Posing& posing);
std::string quote_ir_name(const std::string& name);
// Whether the probe kernel makes any operand divergent (an integer or floating-point scalar or vector).
bool has_divergent_operand(const ProbeShape& shape);
// A posing of `shape` as the data contract states it (db/column.h): what does not apply to the intrinsic left out.
CallPosing call_posing(const ProbeShape& shape, const Posing& posing);
// The posing of a probe kernel that poses the call as `call` says (what it leaves out, the default's).
Posing probe_posing(const ProbeShape& shape, const CallPosing& call, int64_t default_imm);
// The declaration every probe and baseline kernel needs (for the work-item id), spelt as a catalog entry
// for it would be, so that one module may hold both.
constexpr const char* kProbeSupportDeclare = "declare i32 @\"llvm.amdgcn.workitem.id.x\"()";

}  // namespace archdb
