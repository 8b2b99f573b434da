// probe/synth.cpp — probe and baseline kernels as IR text (see synth.h).
#include "probe/synth.h"

#include <cctype>

namespace archdb {
namespace {

bool is_integer_type(const std::string& t, int* bits = nullptr) {
  if (t.size() < 2 || t[0] != 'i') return false;
  for (size_t i = 1; i < t.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
  if (bits) *bits = std::stoi(t.substr(1));
  return true;
}

bool is_narrow(const std::string& type) {
  int bits = 0;
  if (is_integer_type(type, &bits)) return bits < 32;
  return type == "half" || type == "bfloat";
}

std::string store_result(const ProbeShape& shape, const std::string& value) {
  if (shape.return_type == "void") return "";
  if (shape.return_fields.empty())
    return "  store volatile " + shape.return_type + " " + value + ", ptr addrspace(1) %out\n";
  // A literal struct cannot be stored as one value on every target: store each field at its own slot.
  std::string ir;
  for (size_t i = 0; i < shape.return_fields.size(); ++i) {
    std::string idx = std::to_string(i);
    ir += "  %f" + idx + " = extractvalue " + shape.return_type + " " + value + ", " + idx + "\n";
    ir += "  %o" + idx + " = getelementptr i8, ptr addrspace(1) %out, i64 " + std::to_string(i * 64) + "\n";
    ir += "  store volatile " + shape.return_fields[i] + " %f" + idx + ", ptr addrspace(1) %o" + idx + "\n";
  }
  return ir;
}

// Makes operand %a<i> of `type` divergent, as a kernel's per-lane data is: mixes in the lane's work-item id.
// Returns the name of the divergent value (or of the argument itself, for pointers and other types a lane
// id does not apply to: buffer descriptors and addresses stay uniform, as kernels pass them).
std::string divergent(const std::string& type, size_t i, std::string& body) {
  std::string a = "%a" + std::to_string(i), d = "%d" + std::to_string(i), n = std::to_string(i);
  auto scalar = [&](const std::string& t, const std::string& value, const std::string& out) {
    int bits = 0;
    if (is_integer_type(t, &bits)) {
      if (bits == 1) {
        body += "  %c" + n + " = icmp eq i32 %tid, 0\n";
        body += "  " + out + " = xor i1 " + value + ", %c" + n + "\n";
      } else {
        std::string id = "%tid";
        if (bits != 32) {
          body += "  %t" + n + " = " + (bits < 32 ? "trunc" : "zext") + " i32 %tid to " + t + "\n";
          id = "%t" + n;
        }
        body += "  " + out + " = add " + t + " " + value + ", " + id + "\n";
      }
      return true;
    }
    if (t == "half" || t == "bfloat" || t == "float" || t == "double") {
      body += "  %t" + n + " = uitofp i32 %tid to " + t + "\n";
      body += "  " + out + " = fadd " + t + " " + value + ", %t" + n + "\n";
      return true;
    }
    return false;
  };
  if (scalar(type, a, d)) return d;
  // <K x E>: element 0 becomes divergent, and with it the vector.
  size_t x = type.find(" x ");
  if (!type.empty() && type.front() == '<' && x != std::string::npos && type.back() == '>') {
    std::string element = type.substr(x + 3, type.size() - x - 4);
    std::string first = "%e" + n, mixed = "%m" + n;
    std::string probe_body;
    std::swap(body, probe_body);
    bool ok = scalar(element, first, mixed);
    std::swap(body, probe_body);
    if (ok) {
      body += "  " + first + " = extractelement " + type + " " + a + ", i32 0\n" + probe_body;
      body += "  " + d + " = insertelement " + type + " " + a + ", " + element + " " + mixed + ", i32 0\n";
      return d;
    }
  }
  return a;
}

// Whether the probe passes operand `i` as the kernel receives it even when it makes data divergent: anything
// that is not data a lane holds (db/column.h, is_data_operand) — pointers, an image intrinsic's descriptors.
bool passed_uniform(const ProbeShape& shape, size_t i) {
  std::vector<std::string> types;
  std::vector<bool> immarg;
  for (const auto& p : shape.params) {
    types.push_back(p.type);
    immarg.push_back(p.immarg);
  }
  return !is_data_operand(shape.callee, types, immarg, i);
}

// The value the call (or the baseline) passes for ordinary operand %a<i>.
std::string operand_value(const ProbeShape& shape, const Posing& posing, size_t i, std::string& body) {
  if (posing.uniform || passed_uniform(shape, i)) return "%a" + std::to_string(i);
  return divergent(shape.params[i].type, i, body);
}

}  // namespace

bool ProbeShape::has_int_immarg() const {
  for (const auto& p : params)
    if (p.immarg && is_integer_type(p.type)) return true;
  return false;
}

size_t ProbeShape::immarg_count() const {
  size_t n = 0;
  for (const auto& p : params) n += p.immarg;
  return n;
}

Posing Posing::all(const ProbeShape& shape, int64_t imm) {
  Posing p;
  p.imm.assign(shape.immarg_count(), imm);
  return p;
}

Posing default_posing(const ProbeShape& shape, int64_t imm) {
  Posing p = Posing::all(shape, imm);
  auto named = [&](const char* prefix) { return shape.callee.rfind(prefix, 0) == 0; };
  bool has_dmask = named("llvm.amdgcn.image.") && !named("llvm.amdgcn.image.atomic.") && !named("llvm.amdgcn.image.bvh");
  if (has_dmask && imm == 0 && !p.imm.empty()) {
    for (const auto& param : shape.params)
      if (param.immarg) {
        if (param.type == "i32") p.imm.front() = 1;
        break;
      }
  }
  return p;
}

std::string Posing::describe(const Posing& base) const {
  std::vector<std::string> parts;
  if (imm != base.imm) {
    std::string values;
    for (size_t i = 0; i < imm.size(); ++i) values += (i ? ", " : "") + std::to_string(imm[i]);
    parts.push_back("immediates " + values);
  }
  if (uniform != base.uniform) parts.push_back(uniform ? "uniform operands" : "divergent operands");
  if (result_unused != base.result_unused) parts.push_back(result_unused ? "result unused" : "result used");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

std::string quote_ir_name(const std::string& name) { return "@\"" + name + "\""; }

CallPosing call_posing(const ProbeShape& shape, const Posing& posing) {
  CallPosing call;
  call.imm = posing.imm;
  if (has_divergent_operand(shape)) call.uniform = posing.uniform;
  if (shape.return_type != "void") call.result_used = !posing.result_unused;
  return call;
}

Posing probe_posing(const ProbeShape& shape, const CallPosing& call, int64_t default_imm) {
  Posing p = default_posing(shape, default_imm);
  if (call.imm.size() == p.imm.size()) p.imm = call.imm;
  if (call.uniform) p.uniform = *call.uniform;
  if (call.result_used) p.result_unused = !*call.result_used;
  return p;
}

bool has_divergent_operand(const ProbeShape& shape) {
  for (size_t i = 0; i < shape.params.size(); ++i)
    if (!passed_uniform(shape, i)) return true;
  return false;
}

std::string immarg_constant(const std::string& type, int64_t value) {
  int bits = 0;
  if (is_integer_type(type, &bits)) {
    if (bits == 1) return type + (value ? " true" : " false");
    return type + " " + std::to_string(value);
  }
  if (type == "half" || type == "bfloat" || type == "float" || type == "double")
    return type + " " + std::to_string(value) + ".0";
  return type + " zeroinitializer";
}

std::string probe_kernel_ir(const std::string& function_name, const ProbeShape& shape, const Posing& posing) {
  std::string sig = "ptr addrspace(1) %out";
  std::string args;
  std::string body = "  %tid = call i32 @\"llvm.amdgcn.workitem.id.x\"()\n";
  size_t immarg = 0;
  for (size_t i = 0; i < shape.params.size(); ++i) {
    const Operand& p = shape.params[i];
    if (!args.empty()) args += ", ";
    if (p.type == "metadata") {
      args += "metadata !{!\"\"}";  // a scope operand: a node holding the scope's name ("" is the system scope)
    } else if (p.immarg) {
      args += immarg_constant(p.type, immarg < posing.imm.size() ? posing.imm[immarg] : 0);
      ++immarg;
    } else {
      sig += ", " + p.type + " %a" + std::to_string(i);
      args += p.type + " " + operand_value(shape, posing, i, body);
    }
  }
  std::string ir = "define amdgpu_kernel void " + quote_ir_name(function_name) + "(" + sig + ") {\n" + body;
  std::string call = "call " + shape.return_type + " " + quote_ir_name(shape.callee) + "(" + args + ")";
  if (shape.return_type == "void" || posing.result_unused) {
    ir += "  " + call + "\n";
  } else {
    ir += "  %r = " + call + "\n" + store_result(shape, "%r");
  }
  ir += "  ret void\n}\n";
  return ir;
}

std::string probe_kernel_ir(const std::string& function_name, const ProbeShape& shape, int64_t imm) {
  return probe_kernel_ir(function_name, shape, Posing::all(shape, imm));
}

std::string posing_signature(const ProbeShape& shape, const Posing& posing) {
  std::string s;
  size_t immarg = 0;
  for (const auto& p : shape.params)
    if (p.immarg && p.type != "metadata") {
      s += immarg_constant(p.type, immarg < posing.imm.size() ? posing.imm[immarg] : 0) + ";";
      ++immarg;
    }
  if (posing.uniform && has_divergent_operand(shape)) s += " uniform";
  if (posing.result_unused && shape.return_type != "void") s += " unused";
  return s;
}

std::string baseline_signature(const ProbeShape& shape, const Posing& posing) {
  std::string s = (posing.result_unused ? std::string("void") : shape.return_type) + " <-";
  for (size_t i = 0; i < shape.params.size(); ++i) {
    const Operand& p = shape.params[i];
    if (!p.immarg && p.type != "metadata") s += " " + p.type + (passed_uniform(shape, i) ? " uniform;" : ";");
  }
  if (posing.uniform) s += " uniform";
  return s;
}

std::string baseline_kernel_ir(const std::string& function_name, const ProbeShape& shape, const Posing& posing) {
  std::string sig = "ptr addrspace(1) %out";
  std::string body = "  %tid = call i32 @\"llvm.amdgcn.workitem.id.x\"()\n";
  for (size_t i = 0; i < shape.params.size(); ++i) {
    const Operand& p = shape.params[i];
    if (p.immarg || p.type == "metadata") continue;
    sig += ", " + p.type + " %a" + std::to_string(i);
    std::string v = operand_value(shape, posing, i, body);
    // Each operand is used by an empty inline-asm statement: it is loaded into a register as the call would
    // need it, and nothing else is emitted that the call's own lowering could be mistaken for (a store of a
    // data operand would look exactly like a store intrinsic).
    std::string type = p.type, value = v;
    if (p.type == "i1") {
      body += "  %z" + std::to_string(i) + " = zext i1 " + v + " to i32\n";
      type = "i32";
      value = "%z" + std::to_string(i);
    }
    body += "  call void asm sideeffect \"; archdb: operand\", \"v\"(" + type + " " + value + ")\n";
  }
  if (shape.return_type != "void" && !posing.result_unused) {
    // A value of the result type is one more kernel argument, placed last so that every operand keeps the
    // probe's kernel-argument offset. A result narrower than a dword gets an unused dword in front: packed
    // into the same dword as a half operand it would be stored with a high-half store the probe never uses.
    if (is_narrow(shape.return_type)) sig += ", i32 %result.align";
    sig += ", " + shape.return_type + " %result";
    body += store_result(shape, "%result");
  }
  return "define amdgpu_kernel void " + quote_ir_name(function_name) + "(" + sig + ") {\n" + body + "  ret void\n}\n";
}

}  // namespace archdb
