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

  bool has_int_immarg() const;
};

// The immediate written for an immarg operand of `type` when probing with `value`.
std::string immarg_constant(const std::string& type, int64_t value);
// The kernel that calls the declaration once with every immarg operand set to `imm`.
std::string probe_kernel_ir(const std::string& function_name, const ProbeShape& shape, int64_t imm);
// Kernels with the same baseline signature share one baseline.
std::string baseline_signature(const ProbeShape& shape);
std::string baseline_kernel_ir(const std::string& function_name, const ProbeShape& shape);
std::string quote_ir_name(const std::string& name);
// The declaration every probe and baseline kernel needs (for the work-item id), spelt as a catalog entry
// for it would be, so that one module may hold both.
constexpr const char* kProbeSupportDeclare = "declare i32 @\"llvm.amdgcn.workitem.id.x\"()";

}  // namespace archdb
