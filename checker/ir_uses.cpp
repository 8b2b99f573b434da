// checker/ir_uses.cpp — reads kernel IR with the linked LLVM's reader (text or bitcode, auto-upgrading as
// the compiler would) and lists the intrinsics it declares or calls.
#include "checker/ir_uses.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Analysis/UniformityAnalysis.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb {

namespace {

// A name as LLVM IR spells it between quotes: bytes that are not printable ASCII, '\\' and '"' as \XX. A name in
// IR is bytes, not text; spelt so, it is text (valid UTF-8, one line) whatever bytes it holds, and reads back as
// the same name in IR (`@"small\FFkernel"`). Printable names are unchanged.
std::string ir_spelling(llvm::StringRef name) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(name, os);
  return os.str();
}

// Intrinsics whose name carries a target prefix are the ones a target may lack; the rest are lowered by
// every backend (or expanded generically) and are not gated.
bool is_target_intrinsic_name(llvm::StringRef name) {
  for (const char* prefix : {"llvm.amdgcn.", "llvm.r600."})
    if (name.starts_with(prefix)) return true;
  return false;
}

// "llvm.nvvm.foo" -> "nvvm"; empty when the name has no second component.
std::string_view prefix_of(std::string_view name) {
  if (name.substr(0, 5) != "llvm.") return {};
  std::string_view rest = name.substr(5);
  size_t dot = rest.find('.');
  return dot == std::string_view::npos ? std::string_view{} : rest.substr(0, dot);
}

// Every target prefix of the linked LLVM's intrinsic table (aarch64, amdgcn, nvvm, x86, ...): LLVM names a
// target intrinsic llvm.<target prefix>.*, and says which intrinsics are target intrinsics.
const std::set<std::string, std::less<>>& target_prefixes() {
  static const std::set<std::string, std::less<>> prefixes = [] {
    std::set<std::string, std::less<>> out;
    for (unsigned id = 1; id < llvm::Intrinsic::num_intrinsics; ++id) {
      if (!compat::is_target_intrinsic(static_cast<llvm::Intrinsic::ID>(id))) continue;
      std::string_view p = prefix_of(llvm::Intrinsic::getBaseName(static_cast<llvm::Intrinsic::ID>(id)));
      if (!p.empty()) out.emplace(p);
    }
    return out;
  }();
  return prefixes;
}

std::string type_text(const llvm::Type* type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type->print(os);
  return os.str();
}

// The calls of llvm.amdgcn.* intrinsics in the module's defined functions, posed as a cell states a call: each
// function's uniformity by LLVM's own analysis, with the target's TTI for its target-cpu and -features (the
// processor the kernel was compiled for decides which values are divergent, wave size included).
std::vector<IrCall> amdgcn_calls(llvm::Module& module) {
  initialize_amdgpu();
  std::map<std::pair<std::string, std::string>, std::unique_ptr<llvm::TargetMachine>> machines;
  std::set<IrCall> calls;
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    std::vector<llvm::CallBase*> amdgcn;
    for (llvm::Instruction& inst : llvm::instructions(function)) {
      auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
      const llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
      if (callee && callee->getName().starts_with("llvm.amdgcn.")) amdgcn.push_back(call);
    }
    if (amdgcn.empty()) continue;  // most functions of a module call none: no machine, no analyses for them
    std::string cpu = function.hasFnAttribute("target-cpu") ? function.getFnAttribute("target-cpu").getValueAsString().str() : "";
    std::string features =
        function.hasFnAttribute("target-features") ? function.getFnAttribute("target-features").getValueAsString().str() : "";
    if (!cpu.empty() && !knows_processor(cpu)) cpu.clear();  // LLVM would warn and use a generic processor
    auto& machine = machines[{cpu, features}];
    if (!machine)
      machine.reset(compat::create_target_machine(amdgpu_target(), amdgpu_triple(), cpu, llvm::TargetOptions(),
                                                  llvm::CodeGenOptLevel::None, features));
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager analyses;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder builder = compat::pass_builder(function.getContext(), machine.get());
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(analyses);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, analyses, sccs, modules);
    const llvm::UniformityInfo& uniformity = analyses.getResult<llvm::UniformityInfoAnalysis>(function);
    for (llvm::CallBase* call : amdgcn) {
      const llvm::Function* callee = call->getCalledFunction();
      IrCall c;
      c.intrinsic = ir_spelling(callee->getName());
      CallPosing posed;
      std::vector<std::string> types;
      std::vector<bool> immarg;
      for (unsigned i = 0; i < callee->getFunctionType()->getNumParams(); ++i) {
        types.push_back(type_text(callee->getFunctionType()->getParamType(i)));
        immarg.push_back(callee->getAttributes().hasParamAttr(i, llvm::Attribute::ImmArg));
      }
      bool stated = true;
      bool data = false, all_uniform = true;
      for (unsigned i = 0; i < types.size(); ++i) {
        const llvm::Value* operand = call->getArgOperand(i);
        if (immarg[i]) {
          const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(operand);
          if (!constant) {
            stated = false;  // a float immediate, say: not a posing a cell states
            continue;
          }
          posed.imm.push_back(constant->getBitWidth() == 1 ? static_cast<int64_t>(constant->getZExtValue())
                                                           : constant->getSExtValue());
        } else if (is_data_operand(c.intrinsic, types, immarg, i)) {
          data = true;
          all_uniform = all_uniform && compat::uniform_at_def(uniformity, operand);
        }
      }
      if (data) posed.uniform = all_uniform;
      if (!call->getType()->isVoidTy()) posed.result_used = !call->use_empty();
      if (stated && !posed.empty()) c.posed = posed;
      calls.insert(std::move(c));
    }
  }
  return {calls.begin(), calls.end()};
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

bool IrCall::operator<(const IrCall& o) const {
  if (intrinsic != o.intrinsic) return intrinsic < o.intrinsic;
  if (posed.has_value() != o.posed.has_value()) return !posed.has_value();
  if (!posed) return false;
  return std::tie(posed->imm, posed->uniform, posed->result_used) <
         std::tie(o.posed->imm, o.posed->uniform, o.posed->result_used);
}

std::optional<std::string> foreign_target_of(const std::string& intrinsic_name) {
  std::string_view prefix = prefix_of(intrinsic_name);
  if (prefix.empty() || prefix == "amdgcn" || prefix == "r600") return std::nullopt;
  if (target_prefixes().count(prefix) == 0) return std::nullopt;
  return std::string(prefix);
}

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

  std::set<std::string> target, generic, kernels, declared_only, added_features;
  std::set<std::pair<std::string, std::string>> targets;  // the functions' distinct (target-cpu, target-features)
  std::map<std::string, std::string> declarations;
  for (const llvm::Function& function : *module) {
    llvm::StringRef fname = function.getName();
    if (fname.starts_with("llvm.")) {
      // Another target's intrinsic (known to LLVM, or spelt with a prefix of its targets) is gated too: the
      // checker refuses it rather than listing it as target-independent.
      bool gated = is_target_intrinsic_name(fname) || function.isTargetIntrinsic() ||
                   foreign_target_of(fname.str()).has_value();
      // An intrinsic cannot have its address taken: no use at all is a declaration nothing calls.
      if (gated && function.use_empty()) declared_only.insert(ir_spelling(fname));
      else (gated ? target : generic).insert(ir_spelling(fname));
      if (gated && !function.use_empty() && fname.starts_with("llvm.amdgcn.")) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "declare ";
        function.getReturnType()->print(os);
        os << " @\"" << ir_spelling(fname) << "\"(";
        for (unsigned i = 0; i < function.getFunctionType()->getNumParams(); ++i) {
          if (i) os << ", ";
          function.getFunctionType()->getParamType(i)->print(os);
        }
        os << ")";
        declarations[ir_spelling(fname)] = os.str();
      }
    } else if (!function.isDeclaration() && (function.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL ||
                                             function.getCallingConv() == llvm::CallingConv::SPIR_KERNEL)) {
      kernels.insert(ir_spelling(fname));
    }
    if (!function.isDeclaration() && function.hasFnAttribute("target-cpu") && function.hasFnAttribute("target-features"))
      targets.emplace(function.getFnAttribute("target-cpu").getValueAsString().str(),
                      function.getFnAttribute("target-features").getValueAsString().str());
  }
  // Once per distinct (cpu, features): a module's functions mostly share one, and each asks LLVM for subtargets.
  for (const auto& [cpu, features] : targets)
    for (std::string& f : features_beyond_default(cpu, features)) added_features.insert(std::move(f));
  IrUses uses;
  uses.target_intrinsics.assign(target.begin(), target.end());
  uses.declared_only.assign(declared_only.begin(), declared_only.end());
  uses.generic_intrinsics.assign(generic.begin(), generic.end());
  uses.kernels.assign(kernels.begin(), kernels.end());
  uses.declarations = std::move(declarations);
  uses.added_features.assign(added_features.begin(), added_features.end());
  uses.calls = amdgcn_calls(*module);
  return uses;
}

IrUses scan_ir_file(const std::string& path) {
  return scan_ir_buffer(read_file(path), path);
}

}  // namespace archdb
