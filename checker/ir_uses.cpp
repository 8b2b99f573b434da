// checker/ir_uses.cpp — reads kernel IR with the linked LLVM's reader (text or bitcode, auto-upgrading as
// the compiler would) and lists the intrinsics it declares or calls.
#include "checker/ir_uses.h"

#include <algorithm>
#include <set>

#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "support/error.h"
#include "support/files.h"

namespace archdb {

namespace {

// Intrinsics whose name carries a target prefix are the ones a target may lack; the rest are lowered by
// every backend (or expanded generically) and are not gated.
bool is_target_intrinsic_name(llvm::StringRef name) {
  for (const char* prefix : {"llvm.amdgcn.", "llvm.r600."})
    if (name.starts_with(prefix)) return true;
  return false;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

IrUses scan_ir_buffer(const std::string& bytes, const std::string& name) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  auto buffer = llvm::MemoryBuffer::getMemBuffer(bytes, name, /*RequiresNullTerminator=*/false);
  std::unique_ptr<llvm::Module> module = llvm::parseIR(buffer->getMemBufferRef(), diagnostic, context);
  if (!module) {
    std::string where = name;
    if (diagnostic.getLineNo() > 0)
      where += ":" + std::to_string(diagnostic.getLineNo()) + ":" + std::to_string(diagnostic.getColumnNo() + 1);
    throw input_error(where + ": not valid LLVM IR: " + one_line(diagnostic.getMessage().str()));
  }
  std::string problems;
  llvm::raw_string_ostream problems_stream(problems);
  if (llvm::verifyModule(*module, &problems_stream))
    throw input_error(name + ": LLVM IR does not verify: " + one_line(problems_stream.str()));

  std::set<std::string> target, generic, kernels;
  for (const llvm::Function& function : *module) {
    llvm::StringRef fname = function.getName();
    if (fname.starts_with("llvm.")) {
      (is_target_intrinsic_name(fname) ? target : generic).insert(fname.str());
    } else if (!function.isDeclaration() && (function.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL ||
                                             function.getCallingConv() == llvm::CallingConv::SPIR_KERNEL)) {
      kernels.insert(fname.str());
    }
  }
  return IrUses{{target.begin(), target.end()}, {generic.begin(), generic.end()}, {kernels.begin(), kernels.end()}};
}

IrUses scan_ir_file(const std::string& path) {
  return scan_ir_buffer(read_file(path), path);
}

}  // namespace archdb
