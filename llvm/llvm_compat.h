// llvm/llvm_compat.h — every difference between the LLVM versions archdb builds against (19 to 24), in one
// place. Nothing else in archdb tests LLVM_VERSION_MAJOR.
#pragma once

#include <llvm/Config/llvm-config.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <llvm/Analysis/UniformityAnalysis.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
// LLVM 23 moved the AMDGPU processor table (parseArchAMDGCN, getArchNameAMDGCN) out of TargetParser.h.
#if LLVM_VERSION_MAJOR >= 23
#include <llvm/TargetParser/AMDGPUTargetParser.h>
#else
#include <llvm/TargetParser/TargetParser.h>
#endif

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
                                                  llvm::CodeGenOptLevel level, llvm::StringRef features = "") {
#if LLVM_VERSION_MAJOR >= 21
  return target.createTargetMachine(triple, cpu, features, options, std::nullopt, std::nullopt, level);
#else
  return target.createTargetMachine(triple.str(), cpu, features, options, std::nullopt, std::nullopt, level);
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
#if LLVM_VERSION_MAJOR >= 22
  return target.createMCRegInfo(triple);
#else
  return target.createMCRegInfo(triple.str());
#endif
}

inline llvm::MCAsmInfo* create_asm_info(const llvm::Target& target, const llvm::MCRegisterInfo& mri,
                                        const llvm::Triple& triple, const llvm::MCTargetOptions& options) {
#if LLVM_VERSION_MAJOR >= 22
  return target.createMCAsmInfo(mri, triple, options);
#else
  return target.createMCAsmInfo(mri, triple.str(), options);
#endif
}

inline llvm::MCSubtargetInfo* create_subtarget_info(const llvm::Target& target, const llvm::Triple& triple,
                                                    llvm::StringRef cpu, llvm::StringRef features = "") {
#if LLVM_VERSION_MAJOR >= 22
  return target.createMCSubtargetInfo(triple, cpu, features);
#else
  return target.createMCSubtargetInfo(triple.str(), cpu, features);
#endif
}

inline llvm::Intrinsic::ID lookup_intrinsic_id(llvm::StringRef name) {
#if LLVM_VERSION_MAJOR >= 20
  return llvm::Intrinsic::lookupIntrinsicID(name);
#else
  return llvm::Function::lookupIntrinsicID(name);
#endif
}

// Whether an intrinsic belongs to one target (llvm.<target prefix>.*) rather than to every backend.
inline bool is_target_intrinsic(llvm::Intrinsic::ID id) {
#if LLVM_VERSION_MAJOR >= 20
  return llvm::Intrinsic::isTargetIntrinsic(id);
#else
  return llvm::Function::isTargetIntrinsic(id);
#endif
}

// The name of one of a target's processor descriptions (LLVM 23 keeps it as an offset into a string table).
inline llvm::StringRef processor_name(const llvm::SubtargetSubTypeKV& processor) {
#if LLVM_VERSION_MAJOR >= 23
  return processor.key();
#else
  return processor.Key;
#endif
}

// The name of one of a target's feature descriptions (LLVM 23 keeps it as an offset into a string table too).
inline llvm::StringRef feature_name(const llvm::SubtargetFeatureKV& feature) {
#if LLVM_VERSION_MAJOR >= 23
  return feature.key();
#else
  return feature.Key;
#endif
}

// MC set-up for in-process assembly, as llvm-mc does it.
inline std::unique_ptr<llvm::MCContext> make_mc_context(const llvm::Triple& triple, const llvm::MCAsmInfo& asm_info,
                                                        const llvm::MCRegisterInfo& registers,
                                                        const llvm::MCSubtargetInfo& subtarget, llvm::SourceMgr* sources,
                                                        const llvm::MCTargetOptions& options) {
#if LLVM_VERSION_MAJOR >= 23
  (void)options;
  return std::make_unique<llvm::MCContext>(triple, asm_info, registers, subtarget, sources);
#else
  return std::make_unique<llvm::MCContext>(triple, &asm_info, &registers, &subtarget, sources, &options);
#endif
}

inline llvm::MCTargetAsmParser* create_target_asm_parser(const llvm::Target& target, const llvm::MCSubtargetInfo& sti,
                                                         llvm::MCAsmParser& parser, const llvm::MCInstrInfo& instructions,
                                                         const llvm::MCTargetOptions& options) {
#if LLVM_VERSION_MAJOR >= 23
  (void)options;
  return target.createMCAsmParser(sti, parser, instructions);
#else
  return target.createMCAsmParser(sti, parser, instructions, options);
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

// ---- Codegen stopped after instruction selection (llvm_compat.cpp): LLVM 20 moved createPassConfig and the
// machine-module pass onto TargetMachine (from LLVMTargetMachine). ----

// Adds to `passes` the code generator's passes up to and including pass `stop` (a pass argument, e.g.
// "finalize-isel"; or up to and without it, `before`), as addPassesToEmitFile would but with no printer: a
// machine-function pass added next sees each function as it then is. False when the target cannot make its
// pass configuration.
bool add_passes_until(llvm::TargetMachine& machine, llvm::legacy::PassManagerBase& passes, const std::string& stop,
                      bool before = false);

// The mnemonic LLVM's instruction printer writes for an opcode ("" for an opcode it prints nothing for, as a
// pseudo-instruction): LLVM 20 made getMnemonic take a reference.
std::string printed_mnemonic(const llvm::MCInstPrinter& printer, unsigned opcode);

// A pass builder for analyses of `machine`'s code: LLVM 24 made the context its first argument.
llvm::PassBuilder pass_builder(llvm::LLVMContext& context, llvm::TargetMachine* machine);

// Whether `value` is uniform where it is defined, by LLVM's uniformity analysis: LLVM 23 renamed isUniform to
// isUniformAtDef (beside isUniformAtUse).
bool uniform_at_def(const llvm::UniformityInfo& info, const llvm::Value* value);

// ---- What LLVM itself declares an intrinsic needs (llvm_compat.cpp): LLVM 23 added a target feature expression
// per intrinsic (Intrinsic::getRequiredTargetFeatures) and MCSubtargetInfo::checkFeatureExpression. ----

// Whether this LLVM declares per-intrinsic required features at all.
bool declares_intrinsic_features();
// The expression LLVM declares `id` needs ("gfx1250-insts", "a,b|c"); nullopt where this LLVM declares none.
std::optional<std::string> required_target_features(llvm::Intrinsic::ID id);
// Whether `subtarget` satisfies `expression` as LLVM evaluates it; nullopt where it cannot be asked safely (a
// feature name the subtarget's table lacks, which LLVM answers with a fatal error, or a "$custom" term).
std::optional<bool> satisfies_features(const llvm::MCSubtargetInfo& subtarget, const std::string& expression);

// ---- LLVM's intrinsic type table (llvm_compat.cpp): its layout changed in LLVM 20 and again in 23. ----

// What one overload slot of an intrinsic accepts.
struct OverloadSlot {
  enum class Shape { kAny, kScalar, kVector } shape = Shape::kAny;
  enum class Element { kAny, kInteger, kFloat, kPointer } element = Element::kAny;
  bool described = false;  // the table names this slot's constraint (a slot only referred to is not)
};

struct IntrinsicTable {
  std::vector<std::string> parts;   // readable types: [0] the result, then each parameter
  std::vector<OverloadSlot> slots;  // one per overload type, in LLVM's order
  bool simple = true;               // only concrete types, overloads and matches: stand-ins are safe
};

IntrinsicTable read_intrinsic_table(llvm::Intrinsic::ID id);

// Whether `type` is a valid signature for `id`; for an overloaded intrinsic, the overload types it implies.
bool intrinsic_signature_fits(llvm::Intrinsic::ID id, llvm::FunctionType* type,
                              llvm::SmallVectorImpl<llvm::Type*>& overload_types);

}  // namespace archdb::compat
