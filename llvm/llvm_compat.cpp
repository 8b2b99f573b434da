// llvm/llvm_compat.cpp — the parts of llvm_compat.h with a body: codegen stopped after instruction selection,
// the instruction printer's mnemonics, and reading LLVM's intrinsic type table, whose layout is one of three
// (LLVM 19; 20 to 22; 23 and later).
#include "llvm/llvm_compat.h"

#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/MC/MCInst.h>
#include <llvm/Support/CommandLine.h>

namespace archdb::compat {

bool add_passes_until(llvm::TargetMachine& machine, llvm::legacy::PassManagerBase& passes, const std::string& stop,
                      bool before) {
  // TargetPassConfig reads -stop-after (-stop-before) while it is made and fills the pipeline: set for this one only.
  auto* option = static_cast<llvm::cl::opt<std::string>*>(
      llvm::cl::getRegisteredOptions()[before ? "stop-before" : "stop-after"]);
  if (!option) return false;
  struct Restore {
    llvm::cl::opt<std::string>* option;
    ~Restore() { *option = std::string(); }
  } restore{option};
  *option = stop;
#if LLVM_VERSION_MAJOR >= 20
  llvm::TargetMachine& codegen = machine;
#else
  auto& codegen = static_cast<llvm::LLVMTargetMachine&>(machine);
#endif
  llvm::TargetPassConfig* config = codegen.createPassConfig(passes);
  if (!config) return false;
  config->setDisableVerify(true);
  passes.add(config);
  passes.add(new llvm::MachineModuleInfoWrapperPass(&codegen));
  if (config->addISelPasses()) return false;
  config->addMachinePasses();
  config->setInitialized();
  return true;
}

llvm::PassBuilder pass_builder(llvm::LLVMContext& context, llvm::TargetMachine* machine) {
#if LLVM_VERSION_MAJOR >= 24
  return llvm::PassBuilder(context, machine);
#else
  (void)context;
  return llvm::PassBuilder(machine);
#endif
}

bool uniform_at_def(const llvm::UniformityInfo& info, const llvm::Value* value) {
#if LLVM_VERSION_MAJOR >= 23
  return info.isUniformAtDef(value);
#else
  return info.isUniform(value);
#endif
}

bool declares_intrinsic_features() { return LLVM_VERSION_MAJOR >= 23; }

std::optional<std::string> required_target_features(llvm::Intrinsic::ID id) {
#if LLVM_VERSION_MAJOR >= 23
  llvm::StringRef expression = llvm::Intrinsic::getRequiredTargetFeatures(id);
  if (expression.empty()) return std::nullopt;
  return expression.str();
#else
  (void)id;
  return std::nullopt;
#endif
}

std::optional<bool> satisfies_features(const llvm::MCSubtargetInfo& subtarget, const std::string& expression) {
#if LLVM_VERSION_MAJOR >= 23
  // Every name must be the subtarget table's: LLVM reports an unknown one with a fatal error.
  std::string name;
  auto known = [&](const std::string& n) {
    for (const llvm::SubtargetFeatureKV& f : subtarget.getAllProcessorFeatures())
      if (feature_name(f) == n) return true;
    return false;
  };
  for (size_t i = 0; i <= expression.size(); ++i) {
    char c = i < expression.size() ? expression[i] : ',';
    if (c == ',' || c == '|' || c == '(' || c == ')' || c == ' ') {
      if (!name.empty() && (name[0] == '$' || !known(name))) return std::nullopt;
      name.clear();
    } else if (!(name.empty() && (c == '+' || c == '-'))) {
      name += c;
    }
  }
  return subtarget.checkFeatureExpression(expression);
#else
  (void)subtarget;
  (void)expression;
  return std::nullopt;
#endif
}

std::string printed_mnemonic(const llvm::MCInstPrinter& printer, unsigned opcode) {
  llvm::MCInst inst;
  inst.setOpcode(opcode);
#if LLVM_VERSION_MAJOR >= 20
  const char* text = printer.getMnemonic(inst).first;
#else
  const char* text = const_cast<llvm::MCInstPrinter&>(printer).getMnemonic(&inst).first;
#endif
  std::string mnemonic = text ? text : "";
  while (!mnemonic.empty() && (mnemonic.back() == ' ' || mnemonic.back() == '\t')) mnemonic.pop_back();
  return mnemonic;
}

using llvm::Intrinsic::IITDescriptor;

namespace {

std::string slot(const char* what, unsigned n) { return std::string(what) + "#" + std::to_string(n); }

struct Reader {
  llvm::ArrayRef<IITDescriptor> rest;
  IntrinsicTable& table;

  void note_slot(unsigned n, OverloadSlot s) {
    if (table.slots.size() <= n) table.slots.resize(n + 1);
    if (!table.slots[n].described) table.slots[n] = s;
  }

  void note_reference(unsigned n) {
    if (table.slots.size() <= n) table.slots.resize(n + 1);
  }

  // Renders one type, consuming its descriptors.
  std::string type() {
    if (rest.empty()) return "?";
    IITDescriptor d = rest.front();
    rest = rest.slice(1);
    switch (d.Kind) {
      case IITDescriptor::Void: return "void";
      case IITDescriptor::MMX: return "x86_mmx";
      case IITDescriptor::Token: return "token";
      case IITDescriptor::Metadata: return "metadata";
      case IITDescriptor::Half: return "half";
      case IITDescriptor::BFloat: return "bfloat";
      case IITDescriptor::Float: return "float";
      case IITDescriptor::Double: return "double";
      case IITDescriptor::Quad: return "fp128";
      case IITDescriptor::PPCQuad: return "ppc_fp128";
      case IITDescriptor::AMX: return "x86_amx";
#if LLVM_VERSION_MAJOR >= 23
      case IITDescriptor::Integer: return "i" + std::to_string(d.IntegerWidth);
      case IITDescriptor::Vector: {
        std::string n = (d.VectorWidth.isScalable() ? "vscale x " : "") + std::to_string(d.VectorWidth.getKnownMinValue());
        return "<" + n + " x " + type() + ">";
      }
      case IITDescriptor::Pointer:
        return d.PointerAddressSpace ? "ptr addrspace(" + std::to_string(d.PointerAddressSpace) + ")" : "ptr";
      case IITDescriptor::Struct: {
        std::string s = "{";
        for (unsigned i = 0; i < d.StructNumElements; ++i) s += (i ? ", " : "") + type();
        return s + "}";
      }
      case IITDescriptor::Overloaded: {
        auto [vc, ec] = d.getOverloadConstraints();
        OverloadSlot s;
        s.described = true;
        s.shape = vc == IITDescriptor::VC_Vector   ? OverloadSlot::Shape::kVector
                  : vc == IITDescriptor::VC_Scalar ? OverloadSlot::Shape::kScalar
                                                   : OverloadSlot::Shape::kAny;
        s.element = ec == IITDescriptor::EC_Integer   ? OverloadSlot::Element::kInteger
                    : ec == IITDescriptor::EC_Float   ? OverloadSlot::Element::kFloat
                    : ec == IITDescriptor::EC_Pointer ? OverloadSlot::Element::kPointer
                                                      : OverloadSlot::Element::kAny;
        note_slot(d.getOverloadIndex(), s);
        const char* what = s.element == OverloadSlot::Element::kInteger   ? "anyint"
                           : s.element == OverloadSlot::Element::kFloat   ? "anyfloat"
                           : s.element == OverloadSlot::Element::kPointer ? "anyptr"
                           : s.shape == OverloadSlot::Shape::kVector      ? "anyvector"
                                                                          : "any";
        return slot(what, d.getOverloadIndex());
      }
      case IITDescriptor::Match: note_reference(d.getOverloadIndex()); return slot("same", d.getOverloadIndex());
      case IITDescriptor::Extend: table.simple = false; return slot("extended", d.getOverloadIndex());
      case IITDescriptor::Trunc: table.simple = false; return slot("truncated", d.getOverloadIndex());
      case IITDescriptor::OneNthEltsVec:
        table.simple = false;
        return "<1/" + std::to_string(d.getVectorDivisor()) + " of #" + std::to_string(d.getOverloadIndex()) + ">";
      case IITDescriptor::SameVecWidth: {
        table.simple = false;
        std::string element = type();
        return "<width of #" + std::to_string(d.getOverloadIndex()) + " x " + element + ">";
      }
      case IITDescriptor::VecElement: table.simple = false; return slot("element-of", d.getOverloadIndex());
      case IITDescriptor::Subdivide2: table.simple = false; return slot("subdivide2", d.getOverloadIndex());
      case IITDescriptor::Subdivide4: table.simple = false; return slot("subdivide4", d.getOverloadIndex());
      case IITDescriptor::VecOfBitcastsToInt: table.simple = false; return slot("int-vector-like", d.getOverloadIndex());
      case IITDescriptor::VecOfAnyPtrsToElt:
        table.simple = false;
        note_slot(d.getOverloadIndex(), OverloadSlot{OverloadSlot::Shape::kVector, OverloadSlot::Element::kPointer, true});
        return "<ptrs to elements of #" + std::to_string(d.getRefOverloadIndex()) + ">";
#else
      case IITDescriptor::VarArg: return "...";
      case IITDescriptor::Integer: return "i" + std::to_string(d.Integer_Width);
      case IITDescriptor::Vector: {
        std::string n = (d.Vector_Width.isScalable() ? "vscale x " : "") + std::to_string(d.Vector_Width.getKnownMinValue());
        return "<" + n + " x " + type() + ">";
      }
      case IITDescriptor::Pointer:
        return d.Pointer_AddressSpace ? "ptr addrspace(" + std::to_string(d.Pointer_AddressSpace) + ")" : "ptr";
      case IITDescriptor::Struct: {
        std::string s = "{";
        for (unsigned i = 0; i < d.Struct_NumElements; ++i) s += (i ? ", " : "") + type();
        return s + "}";
      }
      case IITDescriptor::Argument: {
        unsigned n = d.getArgumentNumber();
        OverloadSlot s;
        s.described = true;
        switch (d.getArgumentKind()) {
          case IITDescriptor::AK_MatchType: note_reference(n); return slot("same", n);
          case IITDescriptor::AK_AnyInteger: s.element = OverloadSlot::Element::kInteger; note_slot(n, s); return slot("anyint", n);
          case IITDescriptor::AK_AnyFloat: s.element = OverloadSlot::Element::kFloat; note_slot(n, s); return slot("anyfloat", n);
          case IITDescriptor::AK_AnyVector: s.shape = OverloadSlot::Shape::kVector; note_slot(n, s); return slot("anyvector", n);
          case IITDescriptor::AK_AnyPointer: s.element = OverloadSlot::Element::kPointer; note_slot(n, s); return slot("anyptr", n);
          default: note_slot(n, s); return slot("any", n);
        }
      }
      case IITDescriptor::ExtendArgument: table.simple = false; return slot("extended", d.getArgumentNumber());
      case IITDescriptor::TruncArgument: table.simple = false; return slot("truncated", d.getArgumentNumber());
#if LLVM_VERSION_MAJOR >= 20
      case IITDescriptor::OneNthEltsVecArgument:
        table.simple = false;
        return "<1/" + std::to_string(d.getVectorDivisor()) + " of #" + std::to_string(d.getRefArgNumber()) + ">";
#else
      case IITDescriptor::HalfVecArgument: table.simple = false; return slot("half-vector-of", d.getArgumentNumber());
#endif
      case IITDescriptor::SameVecWidthArgument: {
        table.simple = false;
        std::string element = type();
        return "<width of #" + std::to_string(d.getArgumentNumber()) + " x " + element + ">";
      }
      case IITDescriptor::VecElementArgument: table.simple = false; return slot("element-of", d.getArgumentNumber());
      case IITDescriptor::Subdivide2Argument: table.simple = false; return slot("subdivide2", d.getArgumentNumber());
      case IITDescriptor::Subdivide4Argument: table.simple = false; return slot("subdivide4", d.getArgumentNumber());
      case IITDescriptor::VecOfBitcastsToInt: table.simple = false; return slot("int-vector-like", d.getArgumentNumber());
      case IITDescriptor::VecOfAnyPtrsToElt:
        table.simple = false;
        note_slot(d.getOverloadArgNumber(), OverloadSlot{OverloadSlot::Shape::kVector, OverloadSlot::Element::kPointer, true});
        return "<ptrs to elements of #" + std::to_string(d.getRefArgNumber()) + ">";
#endif
      default: table.simple = false; return "?";
    }
  }
};

}  // namespace

IntrinsicTable read_intrinsic_table(llvm::Intrinsic::ID id) {
  IntrinsicTable table;
  llvm::SmallVector<IITDescriptor, 16> descriptors;
#if LLVM_VERSION_MAJOR >= 23
  auto [entries, args, vararg] = llvm::Intrinsic::getIntrinsicInfoTableEntries(id, descriptors);
  Reader reader{entries, table};
  table.parts.push_back(reader.type());
  while (!reader.rest.empty()) table.parts.push_back(reader.type());
  if (vararg) table.parts.push_back("...");
  (void)args;
#else
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, descriptors);
  Reader reader{descriptors, table};
  table.parts.push_back(reader.type());
  while (!reader.rest.empty()) table.parts.push_back(reader.type());
#endif
  return table;
}

bool intrinsic_signature_fits(llvm::Intrinsic::ID id, llvm::FunctionType* type,
                              llvm::SmallVectorImpl<llvm::Type*>& overload_types) {
#if LLVM_VERSION_MAJOR >= 23
  return llvm::Intrinsic::isSignatureValid(id, type, overload_types);
#else
  llvm::SmallVector<IITDescriptor, 16> descriptors;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, descriptors);
  llvm::ArrayRef<IITDescriptor> rest = descriptors;
  if (llvm::Intrinsic::matchIntrinsicSignature(type, rest, overload_types) != llvm::Intrinsic::MatchIntrinsicTypes_Match)
    return false;
  return !llvm::Intrinsic::matchIntrinsicVarArg(type->isVarArg(), rest);
#endif
}

}  // namespace archdb::compat
