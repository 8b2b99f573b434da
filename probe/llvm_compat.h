// probe/llvm_compat.h — every difference between the LLVM versions archdb builds against (19 to 24), in one
// place. Nothing else in archdb tests LLVM_VERSION_MAJOR.
#pragma once

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>

namespace archdb::compat {

inline const llvm::Target* lookup_target(const llvm::Triple& triple, std::string& error) {
#if LLVM_VERSION_MAJOR >= 21
  return llvm::TargetRegistry::lookupTarget(triple, error);
#else
  return llvm::TargetRegistry::lookupTarget(triple.str(), error);
#endif
}

inline llvm::TargetMachine* create_target_machine(const llvm::Target& target, const llvm::Triple& triple,
                                                  llvm::StringRef cpu, const llvm::TargetOptions& options,
                                                  llvm::CodeGenOptLevel level) {
#if LLVM_VERSION_MAJOR >= 21
  return target.createTargetMachine(triple, cpu, "", options, std::nullopt, std::nullopt, level);
#else
  return target.createTargetMachine(triple.str(), cpu, "", options, std::nullopt, std::nullopt, level);
#endif
}

inline void set_target_triple(llvm::Module& module, const llvm::Triple& triple) {
#if LLVM_VERSION_MAJOR >= 21
  module.setTargetTriple(triple);
#else
  module.setTargetTriple(triple.str());
#endif
}

inline llvm::MCRegisterInfo* create_register_info(const llvm::Target& target, const llvm::Triple& triple) {
#if LLVM_VERSION_MAJOR >= 21
  return target.createMCRegInfo(triple);
#else
  return target.createMCRegInfo(triple.str());
#endif
}

inline llvm::MCAsmInfo* create_asm_info(const llvm::Target& target, const llvm::MCRegisterInfo& mri,
                                        const llvm::Triple& triple, const llvm::MCTargetOptions& options) {
#if LLVM_VERSION_MAJOR >= 21
  return target.createMCAsmInfo(mri, triple, options);
#else
  return target.createMCAsmInfo(mri, triple.str(), options);
#endif
}

inline llvm::MCSubtargetInfo* create_subtarget_info(const llvm::Target& target, const llvm::Triple& triple,
                                                    llvm::StringRef cpu) {
#if LLVM_VERSION_MAJOR >= 21
  return target.createMCSubtargetInfo(triple, cpu, "");
#else
  return target.createMCSubtargetInfo(triple.str(), cpu, "");
#endif
}

inline llvm::Intrinsic::ID lookup_intrinsic_id(llvm::StringRef name) {
#if LLVM_VERSION_MAJOR >= 20
  return llvm::Intrinsic::lookupIntrinsicID(name);
#else
  return llvm::Function::lookupIntrinsicID(name);
#endif
}

// The attributes LLVM attaches to an intrinsic's declaration (immarg among them).
inline llvm::AttributeList intrinsic_attributes(llvm::LLVMContext& context, llvm::Intrinsic::ID id,
                                                llvm::FunctionType* type) {
#if LLVM_VERSION_MAJOR >= 21
  return llvm::Intrinsic::getAttributes(context, id, type);
#else
  (void)type;
  return llvm::Intrinsic::getAttributes(context, id);
#endif
}

}  // namespace archdb::compat
