// checker/ir_uses.h — which intrinsics a kernel's LLVM IR (.ll text or .bc bitcode) declares or calls, read
// by the linked LLVM's IR reader (so retired spellings are auto-upgraded as the compiler would).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/column.h"

namespace archdb {

// One distinct call of an llvm.amdgcn.* intrinsic: the name called, and the call as a cell states the one it answers
// (db/column.h, CallPosing): the constants of its immarg operands, whether every operand that is per-lane data
// (is_data_operand) is uniform by LLVM's uniformity analysis on the function's own processor, whether its result
// is used. `posed` is empty when an immarg operand is not an integer constant archdb can state.
struct IrCall {
  std::string intrinsic;
  std::optional<CallPosing> posed;
  bool operator<(const IrCall& o) const;
  bool operator==(const IrCall& o) const { return intrinsic == o.intrinsic && posed == o.posed; }
};

struct IrUses {
  // Target intrinsics, sorted, unique: llvm.amdgcn.* and llvm.r600.*, and those of any other target LLVM
  // knows (llvm.nvvm.*, llvm.x86.*: the checker refuses them, see foreign_target_of).
  // Only those the IR calls: a declaration nothing calls is in declared_only instead, listed and not gated.
  std::vector<std::string> target_intrinsics;
  std::vector<std::string> declared_only;       // target intrinsics declared and never called, sorted, unique
  std::vector<std::string> generic_intrinsics;  // target-independent llvm.* ones, sorted, unique
  std::vector<std::string> kernels;             // functions defined with a GPU kernel calling convention
  // Each called llvm.amdgcn.* intrinsic's declaration as LLVM read it ("declare double @\"llvm.amdgcn.cos.f64\"(double)"),
  // for measuring an instantiation no census measured.
  std::map<std::string, std::string> declarations;
  // What the defined functions' "target-features" change on their own "target-cpu" (features_beyond_default),
  // sorted, unique: e.g. "+wavefrontsize64" for a wave64 kernel of gfx1100. The columns are measured with each
  // processor's own features, so a kernel compiled with others is not answered by them.
  std::vector<std::string> added_features;
  // Every distinct llvm.amdgcn.* call, by intrinsic then posing: what the checker answers, call by call.
  std::vector<IrCall> calls;
};

// The target an intrinsic name belongs to when that is a target of the linked LLVM other than AMDGPU
// ("llvm.nvvm.read.ptx.sreg.tid.x" -> "nvvm", "llvm.x86.sse2.pause" -> "x86"), from LLVM's own intrinsic
// table (the prefixes of its target intrinsics); nullopt for llvm.amdgcn.*, llvm.r600.*, target-independent
// intrinsics and names that are no intrinsic. Thread-safe.
std::optional<std::string> foreign_target_of(const std::string& intrinsic_name);

// Throws input_error "NAME:LINE:COL: message" when the IR does not parse or verify.
IrUses scan_ir_file(const std::string& path);
IrUses scan_ir_buffer(const std::string& bytes, const std::string& name);

}  // namespace archdb
