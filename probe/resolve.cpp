// probe/resolve.cpp — the flavor axis (see resolve.h). LLVM's IR reader does the resolving, exactly as it
// would for a kernel's IR: it remangles misspelt overload suffixes and auto-upgrades retired intrinsics; the
// verifier then says whether the declared types fit.
#include "probe/resolve.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm/llvm_compat.h"

#include <cctype>
#include <cstring>

namespace archdb {
namespace {


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

// A concrete type for an intrinsic with stand-ins for its overload types, where the table has no derived
// types whose rules a stand-in could break (for showing which operands are immarg).
llvm::FunctionType* stand_in_type(llvm::Intrinsic::ID id, const compat::IntrinsicTable& table, llvm::LLVMContext& ctx) {
  if (!llvm::Intrinsic::isOverloaded(id)) return llvm::Intrinsic::getType(ctx, id);
  if (!table.simple) return nullptr;
  std::vector<llvm::Type*> tys;
  for (const auto& slot : table.slots) {
    llvm::Type* element = slot.element == compat::OverloadSlot::Element::kFloat     ? llvm::Type::getFloatTy(ctx)
                          : slot.element == compat::OverloadSlot::Element::kPointer ? static_cast<llvm::Type*>(llvm::PointerType::get(ctx, 0))
                                                                                    : llvm::Type::getInt32Ty(ctx);
    tys.push_back(slot.shape == compat::OverloadSlot::Shape::kVector ? llvm::FixedVectorType::get(element, 4) : element);
  }
  return llvm::Intrinsic::getType(ctx, id, tys);
}

std::string render_template(llvm::Intrinsic::ID id, llvm::LLVMContext& ctx) {
  compat::IntrinsicTable table = compat::read_intrinsic_table(id);
  llvm::AttributeList attrs;
  if (llvm::FunctionType* fty = stand_in_type(id, table, ctx)) attrs = compat::intrinsic_attributes(ctx, id, fty);
  std::string s = table.parts.empty() ? "?" : table.parts.front();
  s += " (";
  for (size_t i = 1; i < table.parts.size(); ++i) {
    s += (i > 1 ? ", " : "") + table.parts[i];
    if (attrs.hasParamAttr(static_cast<unsigned>(i - 1), llvm::Attribute::ImmArg)) s += " immarg";
  }
  return s + ")";
}

// Whether the given overload types can be what the table's slots accept; getType is not safe otherwise.
bool overload_types_fit(const compat::IntrinsicTable& table, llvm::ArrayRef<llvm::Type*> tys) {
  if (tys.size() != table.slots.size()) return false;
  for (size_t i = 0; i < tys.size(); ++i) {
    const auto& slot = table.slots[i];
    llvm::Type* t = tys[i];
    if (slot.shape == compat::OverloadSlot::Shape::kVector && !t->isVectorTy()) return false;
    if (slot.shape == compat::OverloadSlot::Shape::kScalar && t->isVectorTy()) return false;
    llvm::Type* element = t->getScalarType();
    if (slot.element == compat::OverloadSlot::Element::kInteger && !element->isIntegerTy()) return false;
    if (slot.element == compat::OverloadSlot::Element::kFloat && !element->isFloatingPointTy()) return false;
    if (slot.element == compat::OverloadSlot::Element::kPointer && !element->isPointerTy()) return false;
  }
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
    if (t->isTokenTy() || t->isLabelTy()) {
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

// The probe module of a declaration on its own: the declaration, what every probe kernel calls, the kernel.
std::string module_text(const ProbeShape& shape, int64_t imm) {
  std::string text = shape.declare_line + "\n";
  if (shape.declare_line != kProbeSupportDeclare) text += std::string(kProbeSupportDeclare) + "\n";
  return text + probe_kernel_ir("probe", shape, imm);
}

// Parses the probe module (declaration + kernel) as a kernel's IR would be read, verifies it, and reports
// what the call resolved to.
Resolution judge(const std::string& declared_name, const ProbeShape& shape, const std::string& flavor_label,
                 llvm::Intrinsic::ID declared_id, const std::vector<int64_t>& immarg_sweep) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  int64_t imm = 0;
  std::string text = module_text(shape, imm);
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
  bool broken = llvm::verifyModule(*m, &vos);
  // The verifier may know an immarg operand's legal values (LLVM 23: "invalid data size for load-to-LDS
  // intrinsic"): then the key is probed with the first sweep value it accepts, as a kernel would pass.
  for (size_t i = 0; broken && shape.has_int_immarg() && i < immarg_sweep.size(); ++i) {
    std::string retry = module_text(shape, immarg_sweep[i]);
    llvm::SMDiagnostic ignored;
    std::unique_ptr<llvm::Module> candidate = llvm::parseAssemblyString(retry, ignored, ctx);
    if (candidate && !llvm::verifyModule(*candidate)) {
      m = std::move(candidate);
      imm = immarg_sweep[i];
      broken = false;
    }
  }
  if (broken) {
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
  r.default_imm = imm;
  std::vector<std::string> other_ops;
  // The probe's own call, leaving aside the work-item id the kernel reads for its operands (unless that is
  // the very intrinsic probed). None left: LLVM upgraded the call into plain instructions.
  bool probing_support = declared_name == "llvm.amdgcn.workitem.id.x";
  llvm::Function* callee = nullptr;
  for (llvm::Instruction& inst : llvm::instructions(*kernel)) {
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
      llvm::Function* f = call->getCalledFunction();
      bool support = f && f->getIntrinsicID() == llvm::Intrinsic::amdgcn_workitem_id_x && !probing_support;
      if (!support) callee = f;
      continue;
    }
    // The operands' divergence, made of the work-item id: ours, not what the call became.
    if (inst.getName().size() > 1 && std::strchr("tcmed", inst.getName()[0]) &&
        std::isdigit(static_cast<unsigned char>(inst.getName()[1])))
      continue;
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
  r.shape.has_side_effects = !callee->onlyReadsMemory();
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

Resolution resolve_declaration(const DeclSpec& spec, const std::string& flavor_label,
                               const std::vector<int64_t>& immarg_sweep) {
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
    compat::IntrinsicTable table = compat::read_intrinsic_table(id);
    if (!overloaded) table.slots.clear();
    if (!overload_types_fit(table, tys))
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  "overload types [" + [&] {
                    std::string s;
                    for (size_t i = 0; i < spec.overload_types.size(); ++i) s += (i ? ", " : "") + spec.overload_types[i];
                    return s;
                  }() + "] do not fit " + spec.name + " in " + flavor_label + ": " + tmpl);
    llvm::FunctionType* fty = llvm::Intrinsic::getType(ctx, id, tys);
    llvm::SmallVector<llvm::Type*, 4> derived;
    if (!compat::intrinsic_signature_fits(id, fty, derived) ||
        llvm::ArrayRef<llvm::Type*>(derived) != llvm::ArrayRef<llvm::Type*>(tys))
      return fail(Resolution::Kind::kSignatureMismatch, spec.name,
                  "overload types do not fit " + spec.name + " in " + flavor_label + ": " + tmpl);
    std::string name = llvm::Intrinsic::getName(id, tys, &scratch, fty);
    llvm::AttributeList attrs = compat::intrinsic_attributes(ctx, id, fty);
    ProbeShape shape;
    std::string why;
    if (!make_shape(name, fty, [&](unsigned i) { return attrs.hasParamAttr(i, llvm::Attribute::ImmArg); }, shape, why))
      return fail(Resolution::Kind::kProbeError, name, why);
    return judge(name, shape, flavor_label, id, immarg_sweep);
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
    llvm::SmallVector<llvm::Type*, 4> tys;
    if (compat::intrinsic_signature_fits(id, fty, tys)) intrinsic_attrs = compat::intrinsic_attributes(ctx, id, fty);
  }
  ProbeShape shape;
  std::string why;
  auto immarg = [&](unsigned i) {
    return f->hasParamAttribute(i, llvm::Attribute::ImmArg) || intrinsic_attrs.hasParamAttr(i, llvm::Attribute::ImmArg);
  };
  if (!make_shape(spec.name, fty, immarg, shape, why)) return fail(Resolution::Kind::kProbeError, spec.name, why);
  return judge(spec.name, shape, flavor_label, id, immarg_sweep);
}

}  // namespace archdb
