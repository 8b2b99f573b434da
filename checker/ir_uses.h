// checker/ir_uses.h — which intrinsics a kernel's LLVM IR (.ll text or .bc bitcode) declares or calls, read
// by the linked LLVM's IR reader (so retired spellings are auto-upgraded as the compiler would).
#pragma once

#include <string>
#include <vector>

namespace archdb {

struct IrUses {
  std::vector<std::string> target_intrinsics;   // llvm.amdgcn.* (and other target prefixes), sorted, unique
  std::vector<std::string> generic_intrinsics;  // target-independent llvm.* ones, sorted, unique
  std::vector<std::string> kernels;             // functions defined with a GPU kernel calling convention
};

// Throws input_error "NAME:LINE:COL: message" when the IR does not parse or verify.
IrUses scan_ir_file(const std::string& path);
IrUses scan_ir_buffer(const std::string& bytes, const std::string& name);

}  // namespace archdb
