// probe/resolve.cpp — the flavor axis (see resolve.h). LLVM's IR reader does the resolving, exactly as it
// would for a kernel's IR: it remangles misspelt overload suffixes and auto-upgrades retired intrinsics; the
// verifier then says whether the declared types fit.
#include "probe/resolve.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "probe/llvm_compat.h"

namespace archdb {
namespace {

using llvm::Intrinsic::IITDescriptor;

std::string type_text(llvm::Type* t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t->print(os);
  return os.str();
}

std::string first_line(const std::string& s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Renders one type descriptor of LLVM's intrinsic table, consuming it from `infos`.
std::string render_descriptor(llvm::ArrayRef<IITDescriptor>& infos) {
  if (infos.empty()) return "?";
  IITDescriptor d = infos.front();
  infos = infos.slice(1);
  auto arg = [&](const char* what) { return std::string(what) + "#" + std::to_string(d.getArgumentNumber()); };
  switch (d.Kind) {
    case IITDescriptor::Void: return "void";
    case IITDescriptor::VarArg: return "...";
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
    case IITDescriptor::Integer: return "i" + std::to_string(d.Integer_Width);
    case IITDescriptor::Vector: {
      std::string n = (d.Vector_Width.isScalable() ? "vscale x " : "") + std::to_string(d.Vector_Width.getKnownMinValue());
      return "<" + n + " x " + render_descriptor(infos) + ">";
    }
    case IITDescriptor::Pointer:
      return d.Pointer_AddressSpace ? "ptr addrspace(" + std::to_string(d.Pointer_AddressSpace) + ")" : "ptr";
    case IITDescriptor::Struct: {
      std::string s = "{";
      for (unsigned i = 0; i < d.Struct_NumElements; ++i) s += (i ? ", " : "") + render_descriptor(infos);
      return s + "}";
    }
    case IITDescriptor::Argument:
      switch (d.getArgumentKind()) {
        case IITDescriptor::AK_Any: return arg("any");
        case IITDescriptor::AK_AnyInteger: return arg("anyint");
        case IITDescriptor::AK_AnyFloat: return arg("anyfloat");
        case IITDescriptor::AK_AnyVector: return arg("anyvector");
        case IITDescriptor::AK_AnyPointer: return arg("anyptr");
        case IITDescriptor::AK_MatchType: return arg("same");
      }
      return arg("any");
    case IITDescriptor::ExtendArgument: return arg("extended");
    case IITDescriptor::TruncArgument: return arg("truncated");
    case IITDescriptor::SameVecWidthArgument: {
      std::string elt = render_descriptor(infos);
      return "<width of " + arg("") + " x " + elt + ">";
    }
    case IITDescriptor::VecElementArgument: return arg("element-of");
    case IITDescriptor::Subdivide2Argument: return arg("subdivide2");
    case IITDescriptor::Subdivide4Argument: return arg("subdivide4");
    case IITDescriptor::VecOfBitcastsToInt: return arg("int-vector-like");
    case IITDescriptor::VecOfAnyPtrsToElt:
      return "<ptrs to elements of #" + std::to_string(d.getRefArgNumber()) + ">";
    case IITDescriptor::OneNthEltsVecArgument:
      return "<1/" + std::to_string(d.getVectorDivisor()) + " of #" + std::to_string(d.getRefArgNumber()) + ">";
    default: return "?";
  }
}

llvm::FunctionType* stand_in_type(llvm::Intrinsic::ID id, llvm::LLVMContext& ctx) {
  if (!llvm::Intrinsic::isOverloaded(id)) return llvm::Intrinsic::getType(ctx, id);
  llvm::SmallVector<IITDescriptor, 16> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  std::vector<llvm::Type*> tys;
  for (const auto& d : table) {
    if (d.Kind == IITDescriptor::Argument) {
      if (d.getArgumentKind() == IITDescriptor::AK_MatchType) continue;
      llvm::Type* t = llvm::Type::getInt32Ty(ctx);
      switch (d.getArgumentKind()) {
        case IITDescriptor::AK_AnyFloat: t = llvm::Type::getFloatTy(ctx); break;
        case IITDescriptor::AK_AnyVector: t = llvm::FixedVectorType::get(llvm::Type::getInt32Ty(ctx), 4); break;
        case IITDescriptor::AK_AnyPointer: t = llvm::PointerType::get(ctx, 0); break;
        default: break;
      }
      if (tys.size() <= d.getArgumentNumber()) tys.resize(d.getArgumentNumber() + 1, nullptr);
      tys[d.getArgumentNumber()] = t;
    } else if (d.Kind != IITDescriptor::Void && d.Kind != IITDescriptor::Integer && d.Kind != IITDescriptor::Half &&
               d.Kind != IITDescriptor::BFloat && d.Kind != IITDescriptor::Float && d.Kind != IITDescriptor::Double &&
               d.Kind != IITDescriptor::Pointer && d.Kind != IITDescriptor::Vector) {
      return nullptr;
    }
  }
  for (llvm::Type* t : tys)
    if (!t) return nullptr;
  return llvm::Intrinsic::getType(ctx, id, tys);
}

std::string render_template(llvm::Intrinsic::ID id, llvm::LLVMContext& ctx) {
  llvm::SmallVector<IITDescriptor, 16> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  llvm::ArrayRef<IITDescriptor> infos = table;
  std::string ret = render_descriptor(infos);
  std::vector<std::string> params;
  while (!infos.empty()) params.push_back(render_descriptor(infos));
  // immarg is a parameter attribute of a concrete declaration: for an overloaded intrinsic, make one with
  // stand-in overload types, where the table has no derived types whose rules the stand-ins could break.
  llvm::AttributeList attrs;
  if (llvm::FunctionType* fty = stand_in_type(id, ctx)) attrs = compat::intrinsic_attributes(ctx, id, fty);
  std::string s = ret + " (";
  for (size_t i = 0; i < params.size(); ++i) {
    s += (i ? ", " : "") + params[i];
    if (attrs.hasParamAttr(static_cast<unsigned>(i), llvm::Attribute::ImmArg)) s += " immarg";
  }
  return s + ")";
}

// How many overload types the intrinsic takes (the highest overload slot its table mentions, plus one).
unsigned overload_count(llvm::Intrinsic::ID id) {
  llvm::SmallVector<IITDescriptor, 16> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  int highest = -1;
  for (const auto& d : table) {
    if (d.Kind == IITDescriptor::Argument && d.getArgumentKind() != IITDescriptor::AK_MatchType)
      highest = std::max(highest, static_cast<int>(d.getArgumentNumber()));
    if (d.Kind == IITDescriptor::VecOfAnyPtrsToElt)
      highest = std::max(highest, static_cast<int>(d.getOverloadArgNumber()));
  }
  return static_cast<unsigned>(highest + 1);
}

// The kinds of the overload slots, to refuse types LLVM's getType would misuse.
bool overload_types_fit(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> tys) {
  llvm::SmallVector<IITDescriptor, 16> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  for (const auto& d : table) {
    if (d.Kind != IITDescriptor::Argument) continue;
    unsigned n = d.getArgumentNumber();
    if (n >= tys.size()) return false;
    llvm::Type* t = tys[n];
    switch (d.getArgumentKind()) {
      case IITDescriptor::AK_AnyInteger:
        if (!t->isIntOrIntVectorTy()) return false;
        break;
      case IITDescriptor::AK_AnyFloat:
        if (!t->isFPOrFPVectorTy()) return false;
        break;
      case IITDescriptor::AK_AnyVector:
        if (!t->isVectorTy()) return false;
        break;
      case IITDescriptor::AK_AnyPointer:
        if (!t->isPointerTy()) return false;
        break;
      default: break;
    }
  }
  // Descriptors derived from an overload (extended, truncated, subdivided, element-of...) need vectors or
  // integers of the right shape; let matchIntrinsicSignature judge those on the type getType builds only
  // when the simple kinds above fit.
  return true;
}

std::string shape_signature(const ProbeShape& shape) {
  std::string s = shape.return_type + " (";
  for (size_t i = 0; i < shape.params.size(); ++i)
    s += (i ? ", " : "") + shape.params[i].type + (shape.params[i].immarg ? " immarg" : "");
  return s + ")";
}

// Builds the probe shape of a declaration of `name` with type `fty`, immarg where `immarg(i)` says.
template <typename ImmargFn>
bool make_shape(const std::string& name, llvm::FunctionType* fty, ImmargFn immarg, ProbeShape& shape,
                std::string& why) {
  shape = ProbeShape{};
  shape.callee = name;
  llvm::Type* ret = fty->getReturnType();
  if (ret->isTokenTy() || ret->isMetadataTy() || ret->isLabelTy()) {
    why = "cannot store a result of type " + type_text(ret);
    return false;
  }
  shape.return_type = type_text(ret);
  if (auto* st = llvm::dyn_cast<llvm::StructType>(ret)) {
    if (!st->isLiteral()) {
      why = "named struct result type " + shape.return_type;
      return false;
    }
    for (llvm::Type* e : st->elements()) shape.return_fields.push_back(type_text(e));
  }
  if (fty->isVarArg()) {
    why = "variadic declaration";
    return false;
  }
  std::string decl = "declare " + shape.return_type + " " + quote_ir_name(name) + "(";
  for (unsigned i = 0; i < fty->getNumParams(); ++i) {
    llvm::Type* t = fty->getParamType(i);
    if (t->isTokenTy() || t->isMetadataTy() || t->isLabelTy()) {
      why = "parameter " + std::to_string(i) + " has type " + type_text(t) + ", which a kernel cannot pass";
      return false;
    }
    Operand op{type_text(t), immarg(i)};
    decl += (i ? ", " : "") + op.type + (op.immarg ? " immarg" : "");
    shape.params.push_back(op);
  }
  shape.declare_line = decl + ")";
  return true;
}

Resolution fail(Resolution::Kind kind, const std::string& intrinsic, const std::string& evidence) {
  Resolution r;
  r.kind = kind;
  r.intrinsic = intrinsic;
  r.evidence = evidence;
  return r;
}

// Is `name` exactly an intrinsic of this LLVM (the base name of a non-overloaded one, or a base name plus
// a suffix for an overloaded one)? lookupIntrinsicID alone matches prefixes.
llvm::Intrinsic::ID exact_intrinsic(const std::string& name) {
  llvm::Intrinsic::ID id = compat::lookup_intrinsic_id(name);
  if (id == llvm::Intrinsic::not_intrinsic) return id;
  llvm::StringRef base = llvm::Intrinsic::getBaseName(id);
  if (name == base) return id;
  if (llvm::Intrinsic::isOverloaded(id) && llvm::StringRef(name).starts_with((base + ".").str())) return id;
  return llvm::Intrinsic::not_intrinsic;
}

// Parses the probe module (declaration + kernel) as a kernel's IR would be read, verifies it, and reports
// what the call resolved to.
Resolution judge(const std::string& declared_name, const ProbeShape& shape, const std::string& flavor_label,
                 llvm::Intrinsic::ID declared_id) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  std::string text = shape.declare_line + "\n" + probe_kernel_ir("probe", shape, 0);
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, diag, ctx);
  std::string template_text = declared_id ? render_template(declared_id, ctx) : "";
  if (!m) {
    std::string msg = diag.getMessage().str();
    if (declared_id)
      return fail(Resolution::Kind::kSignatureMismatch, llvm::Intrinsic::getBaseName(declared_id).str(),
                  "LLVM's IR reader rejects the declaration (" + msg + "); " + flavor_label + " expects " + template_text);
    return fail(Resolution::Kind::kProbeError, declared_name, "probe module does not parse: " + msg);
  }
  std::string verify;
  llvm::raw_string_ostream vos(verify);
  if (llvm::verifyModule(*m, &vos)) {
    std::string msg = first_line(vos.str());
    bool about_signature = msg.find("Intrinsic has incorrect") != std::string::npos ||
                           msg.find("Intrinsic name not mangled correctly") != std::string::npos ||
                           msg.find("Intrinsic called with incompatible signature") != std::string::npos ||
                           msg.find("Callsite was not defined with variable arguments") != std::string::npos;
    if (about_signature && declared_id)
      return fail(Resolution::Kind::kSignatureMismatch, llvm::Intrinsic::getBaseName(declared_id).str(),
                  "declared " + shape_signature(shape) + "; " + flavor_label + " expects " + template_text + " (" +
                      msg + ")");
    return fail(Resolution::Kind::kProbeError, declared_name, "probe module fails verification: " + msg);
  }
  llvm::Function* kernel = m->getFunction("probe");
  Resolution r;
  r.kind = Resolution::Kind::kResolved;
  r.shape = shape;
  std::vector<std::string> other_ops;
  llvm::Function* callee = nullptr;
  for (llvm::Instruction& inst : llvm::instructions(*kernel)) {
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
      if (!callee) callee = call->getCalledFunction();
      continue;
    }
    if (llvm::isa<llvm::ReturnInst>(inst)) continue;
    if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst); st && st->isVolatile()) continue;
    if (llvm::isa<llvm::ExtractValueInst>(inst) || llvm::isa<llvm::GetElementPtrInst>(inst)) continue;
    other_ops.push_back(inst.getOpcodeName());
  }
  if (!callee) {
    // Upgraded into plain instructions: the probe still measures whether they lower.
    std::string ops;
    for (const auto& o : other_ops) ops += (ops.empty() ? "" : ", ") + o;
    r.intrinsic = declared_name;
    r.upgrade = "auto-upgraded: the call becomes " + (ops.empty() ? std::string("nothing") : ops);
    return r;
  }
  std::string resolved = callee->getName().str();
  if (!callee->isIntrinsic() || callee->getIntrinsicID() == llvm::Intrinsic::not_intrinsic) {
    if (llvm::StringRef(resolved).starts_with("llvm."))
      return fail(Resolution::Kind::kNameAbsent, declared_name, "not an intrinsic in " + flavor_label);
    return fail(Resolution::Kind::kCatalogError, declared_name, "@" + resolved + " is not an llvm.* intrinsic");
  }
  r.intrinsic = resolved;
  if (resolved != declared_name) {
    bool same_id = declared_id && callee->getIntrinsicID() == declared_id;
    r.upgrade = std::string(same_id ? "remangled" : "auto-upgraded") + " from " + declared_name;
  }
  return r;
}

}  // namespace

std::string describe_intrinsic(const std::string& name) {
  llvm::Intrinsic::ID id = exact_intrinsic(name);
  if (id == llvm::Intrinsic::not_intrinsic) return "";
  llvm::LLVMContext ctx;
  return render_template(id, ctx);
}

Resolution resolve_declaration(const DeclSpec& spec, const std::string& flavor_label) {
  llvm::LLVMContext ctx;
  if (spec.kind == DeclSpec::Kind::kIntrinsic) {
    llvm::Intrinsic::ID id = exact_intrinsic(spec.name);
    if (id == llvm::Intrinsic::not_intrinsic || llvm::Intrinsic::getBaseName(id) != spec.name)
      return fail(Resolution::Kind::kNameAbsent, spec.name, "not an intrinsic in " + flavor_label);
    std::string tmpl = render_template(id, ctx);
    bool overloaded = llvm::Intrinsic::isOverloaded(id);
    if (!overloaded && spec.overloaded)
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  spec.name + " is not overloaded in " + flavor_label + ": its signature is " + tmpl);
    if (overloaded && !spec.overloaded)
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  spec.name + " is overloaded in " + flavor_label + " and needs overload types: " + tmpl);
    llvm::Module scratch("types", ctx);
    std::vector<llvm::Type*> tys;
    for (const auto& text : spec.overload_types) {
      llvm::SMDiagnostic diag;
      llvm::Type* t = llvm::parseType(text, diag, scratch);
      if (!t)
        return fail(Resolution::Kind::kCatalogError, spec.name,
                    "invalid overload type '" + text + "': " + diag.getMessage().str());
      tys.push_back(t);
    }
    unsigned want = overloaded ? overload_count(id) : 0;
    if (tys.size() != want || !overload_types_fit(id, tys))
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  "overload types [" + [&] {
                    std::string s;
                    for (size_t i = 0; i < spec.overload_types.size(); ++i) s += (i ? ", " : "") + spec.overload_types[i];
                    return s;
                  }() + "] do not fit " + spec.name + " in " + flavor_label + ": " + tmpl);
    llvm::FunctionType* fty = llvm::Intrinsic::getType(ctx, id, tys);
    llvm::SmallVector<IITDescriptor, 16> table;
    llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
    llvm::ArrayRef<IITDescriptor> ref = table;
    llvm::SmallVector<llvm::Type*, 4> derived;
    if (llvm::Intrinsic::matchIntrinsicSignature(fty, ref, derived) != llvm::Intrinsic::MatchIntrinsicTypes_Match ||
        llvm::ArrayRef<llvm::Type*>(derived) != llvm::ArrayRef<llvm::Type*>(tys))
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  "overload types do not fit " + spec.name + " in " + flavor_label + ": " + tmpl);
    std::string name = llvm::Intrinsic::getName(id, tys, &scratch, fty);
    llvm::AttributeList attrs = compat::intrinsic_attributes(ctx, id, fty);
    ProbeShape shape;
    std::string why;
    if (!make_shape(name, fty, [&](unsigned i) { return attrs.hasParamAttr(i, llvm::Attribute::ImmArg); }, shape, why))
      return fail(Resolution::Kind::kProbeError, name, why);
    return judge(name, shape, flavor_label, id);
  }

  // An explicit declaration. Read its type under a neutral name first: under its own name the IR reader
  // would already upgrade it, and we want the kernel to call exactly what was declared.
  std::string neutral = spec.declare_text;
  std::string quoted = "@\"" + spec.name + "\"";
  size_t at = neutral.find(quoted);
  size_t len = quoted.size();
  if (at == std::string::npos) {
    at = neutral.find("@" + spec.name);
    len = spec.name.size() + 1;
  }
  neutral.replace(at, len, "@__archdb_declared");
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(neutral, diag, ctx);
  if (!m)
    return fail(Resolution::Kind::kCatalogError, spec.name, "the declare line does not parse: " + diag.getMessage().str());
  llvm::Function* f = m->getFunction("__archdb_declared");
  if (!f || !f->isDeclaration())
    return fail(Resolution::Kind::kCatalogError, spec.name, "the declare line declares no function");
  if (!llvm::StringRef(spec.name).starts_with("llvm."))
    return fail(Resolution::Kind::kCatalogError, spec.name, "@" + spec.name + " is not an llvm.* intrinsic name");
  llvm::Intrinsic::ID id = exact_intrinsic(spec.name);
  llvm::FunctionType* fty = f->getFunctionType();
  llvm::AttributeList intrinsic_attrs;
  if (id != llvm::Intrinsic::not_intrinsic) {
    // immarg positions come from LLVM's table when the declared shape is the intrinsic's own.
    llvm::SmallVector<IITDescriptor, 16> table;
    llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
    llvm::ArrayRef<IITDescriptor> ref = table;
    llvm::SmallVector<llvm::Type*, 4> tys;
    if (llvm::Intrinsic::matchIntrinsicSignature(fty, ref, tys) == llvm::Intrinsic::MatchIntrinsicTypes_Match)
      intrinsic_attrs = compat::intrinsic_attributes(ctx, id, fty);
  }
  ProbeShape shape;
  std::string why;
  auto immarg = [&](unsigned i) {
    return f->hasParamAttribute(i, llvm::Attribute::ImmArg) || intrinsic_attrs.hasParamAttr(i, llvm::Attribute::ImmArg);
  };
  if (!make_shape(spec.name, fty, immarg, shape, why)) return fail(Resolution::Kind::kProbeError, spec.name, why);
  return judge(spec.name, shape, flavor_label, id);
}

}  // namespace archdb
