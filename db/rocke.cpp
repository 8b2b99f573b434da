// db/rocke.cpp — see rocke.h.
#include "db/rocke.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "schema/catalog.h"
#include "schema/targets.h"
#include "support/error.h"
#include "support/json_depth.h"

namespace archdb {

std::string imported_name(const std::string& format, const std::string& flavor) { return format + ":" + flavor; }

namespace {

// A field of a JSON object, of the JSON type the format gives it; anything else is a one-line input error
// naming the file and the field.
class Fields {
 public:
  explicit Fields(const std::string& label) : label_(label) {}

  Error fail(const std::string& why) const { return input_error(label_ + ": " + why); }

  const nlohmann::json* find(const nlohmann::json& object, const std::string& name) const {
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
  }
  const nlohmann::json& require(const nlohmann::json& object, const std::string& name, const std::string& where) const {
    const nlohmann::json* v = find(object, name);
    if (!v) throw fail(where + name + ": missing");
    return *v;
  }
  void expect(const nlohmann::json& v, nlohmann::json::value_t type, const char* type_name, const std::string& field) const {
    bool fits = v.type() == type || (type == nlohmann::json::value_t::number_integer && v.is_number_unsigned());
    if (!fits) throw fail(field + ": expected " + type_name + ", got " + describe(v));
  }
  std::string string(const nlohmann::json& object, const std::string& name, const std::string& where) const {
    const nlohmann::json& v = require(object, name, where);
    expect(v, nlohmann::json::value_t::string, "a string", where + name);
    return v.get<std::string>();
  }
  std::string optional_string(const nlohmann::json& object, const std::string& name, const std::string& where) const {
    const nlohmann::json* v = find(object, name);
    if (!v) return "";
    expect(*v, nlohmann::json::value_t::string, "a string", where + name);
    return v->get<std::string>();
  }

 private:
  static std::string describe(const nlohmann::json& v) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + text;
  }
  const std::string& label_;
};

}  // namespace

std::optional<int> clang_major(const std::string& clang) {
  for (const char* marker : {"clang version ", "LLVM version "}) {
    size_t at = clang.find(marker);
    if (at == std::string::npos) continue;
    size_t digits = at + std::strlen(marker), end = digits;
    while (end < clang.size() && std::isdigit(static_cast<unsigned char>(clang[end]))) ++end;
    if (end > digits && end - digits < 4) return std::stoi(clang.substr(digits, end - digits));
  }
  return std::nullopt;
}

RockeColumn parse_rocke(const std::string& text, const std::string& label,
                        const std::function<bool(const std::string&)>& known_target) {
  Fields f(label);
  nlohmann::json j;
  check_json_depth(text, label);
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double's (1e400)
    throw f.fail(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw f.fail("not a JSON object");
  std::string schema = f.string(j, "schema", "");
  if (schema != kRockeSchema) throw f.fail("schema is '" + schema + "', expected '" + kRockeSchema + "'");
  RockeColumn col;
  const nlohmann::json& toolchain = f.require(j, "toolchain", "");
  f.expect(toolchain, nlohmann::json::value_t::object, "an object", "toolchain");
  col.toolchain = toolchain;
  col.flavor = f.string(toolchain, "flavor", "toolchain.");
  if (!is_valid_flavor(col.flavor)) throw f.fail("toolchain.flavor '" + col.flavor + "' is not a flavor (llvmNN)");
  // The label must be the compiler's own: a file whose clang says another major version is mislabelled.
  std::string clang = f.optional_string(toolchain, "clang", "toolchain.");
  if (auto major = clang_major(clang); major && "llvm" + std::to_string(*major) != col.flavor)
    throw f.fail("toolchain.clang is '" + clang + "' (LLVM " + std::to_string(*major) + ") but the file is labelled " +
                 col.flavor + " (mislabelled)");
  const nlohmann::json& arches = f.require(toolchain, "arches", "toolchain.");
  f.expect(arches, nlohmann::json::value_t::array, "an array", "toolchain.arches");
  std::set<std::string> arch_set;
  for (size_t i = 0; i < arches.size(); ++i) {
    f.expect(arches[i], nlohmann::json::value_t::string, "a string", "toolchain.arches[" + std::to_string(i) + "]");
    std::string a = arches[i].get<std::string>();
    if (!is_valid_target_name(a)) throw f.fail("toolchain.arches names '" + a + "', not a GPU target");
    if (known_target && !known_target(a))
      throw f.fail("toolchain.arches names '" + a + "', which is neither a wired target nor a processor this LLVM knows");
    if (!arch_set.insert(a).second) throw f.fail("toolchain.arches names '" + a + "' twice");
    col.arches.push_back(a);
  }
  const nlohmann::json& keys = f.require(j, "keys", "");
  f.expect(keys, nlohmann::json::value_t::object, "an object", "keys");
  if (keys.empty()) throw f.fail("keys: no keys");
  nlohmann::json canonical = nlohmann::json::object();
  if (const nlohmann::json* c = f.find(j, "canonical")) {
    f.expect(*c, nlohmann::json::value_t::object, "an object", "canonical");
    canonical = *c;
  }
  for (const auto& [key, per_arch] : keys.items()) {
    if (!is_valid_key(key)) throw f.fail("keys: invalid key '" + key + "'");
    f.expect(per_arch, nlohmann::json::value_t::object, "an object of arches", "keys." + key);
    std::set<std::string> seen;
    for (const auto& [arch, c] : per_arch.items()) {
      std::string field = "keys." + key + "." + arch;
      if (!arch_set.count(arch)) throw f.fail(field + ": arch not in toolchain.arches");
      f.expect(c, nlohmann::json::value_t::object, "an object", field);
      seen.insert(arch);
      Cell cell;
      cell.key = key;
      cell.target = arch;
      std::string status = f.string(c, "status", field + ".");
      auto s = parse_status(status);
      if (!s || *s == Status::kProbeError) throw f.fail(field + ".status: unknown status '" + status + "'");
      cell.status = *s;
      std::string verified = f.string(c, "verified_on", field + ".");
      if (verified != col.flavor)
        throw f.fail(field + ".verified_on: '" + verified + "' but the file is labelled " + col.flavor + " (mislabelled)");
      cell.evidence = f.optional_string(c, "evidence", field + ".");
      if (cell.status != Status::kOk && cell.evidence.empty()) cell.evidence = "(no evidence in the imported file)";
      if (cell.status == Status::kOk) cell.evidence.clear();
      if (const nlohmann::json* imm = f.find(c, "probe_imm")) {
        f.expect(*imm, nlohmann::json::value_t::number_integer, "an integer", field + ".probe_imm");
        cell.posed = CallPosing{{imm->get<int64_t>()}, std::nullopt, std::nullopt};  // rocKE's sweep: every immediate
      }
      const nlohmann::json* name = f.find(canonical, key);
      if (name) f.expect(*name, nlohmann::json::value_t::string, "a string", "canonical." + key);
      cell.intrinsic = name ? name->get<std::string>() : "(not resolved)";
      col.cells.push_back(std::move(cell));
    }
    if (seen.size() != arch_set.size()) throw f.fail("keys." + key + ": lacks cells for some of toolchain.arches");
  }
  std::sort(col.cells.begin(), col.cells.end(), [](const Cell& a, const Cell& b) {
    return a.key != b.key ? a.key < b.key : a.target < b.target;
  });
  return col;
}

std::string_view rocke_status(Status status) {
  switch (status) {
    case Status::kOk:
    case Status::kNameAbsent:
    case Status::kArchAbsent:
    case Status::kTargetUnsupported:
    case Status::kToolchainCrash:
    case Status::kToolchainTimeout:
      return status_name(status);
    case Status::kSignatureMismatch:
      return status_name(Status::kNameAbsent);
    case Status::kProbeError:
      break;
  }
  throw internal_error("a probe_error cell has no rocke-v1 form (it is never stored)");
}

namespace {
// rocKE's immarg sweep (gen_arch_domain.py, _IMMARG_PROBE_VALUES): a probe_imm is one of these.
const std::vector<int64_t> kRockeSweep = {1, 2, 4, 12, 16};
}  // namespace

int rocke_generation(const Provenance& p) {
  if (p.opt_level != "O0" || p.timeout_s <= 0) return 1;
  for (int64_t v : kRockeSweep)
    if (std::find(p.immarg_sweep.begin(), p.immarg_sweep.end(), v) == p.immarg_sweep.end()) return 2;
  return p.generator_version >= 1 ? 4 : 3;
}

std::string render_rocke(const Column& column) {
  const Provenance& p = column.provenance;
  nlohmann::json j;  // keys sorted, as rocKE writes them
  j["_comment"] = "GENERATED by archdb export --format rocke-v1 from its measured column " + p.flavor +
                  ": which intrinsic declarations lower for which gfx target, measured in process by LLVM's own "
                  "code generator and MC layer (equivalent to rocKE's probe_cflags). Do not hand-edit.";
  j["schema"] = kRockeSchema;
  std::vector<std::string> arches = p.targets;
  std::sort(arches.begin(), arches.end());  // as Python's sorted()
  j["toolchain"] = {{"flavor", p.flavor},
                    {"clang", p.identity + " (" + p.llvm_version + (p.package.empty() ? "" : ", " + p.package) + ")"},
                    {"arches", arches},
                    {"generator", rocke_generation(p)},
                    {"archdb_generator", p.generator_version},
                    // In process: no clang driver, no device library linked; the code generator at p.opt_level.
                    {"probe_cflags", {"-" + p.opt_level, "-nogpulib"}},
                    {"probe_timeout_s", p.timeout_s}};
  nlohmann::json keys = nlohmann::json::object(), canonical = nlohmann::json::object();
  for (const auto& c : column.cells) {
    nlohmann::json cell = {{"status", std::string(rocke_status(c.status))}, {"verified_on", p.flavor}};
    if (c.status == Status::kSignatureMismatch) cell["evidence"] = "signature_mismatch: " + c.evidence;
    else if (c.status != Status::kOk) cell["evidence"] = c.evidence;
    // What codegen emitted and LLVM's assembler rejects does not build (rocKE's probe assembles it and fails):
    // never an ok in a peer's file, which has no status for "lowered, but not assembled".
    if (c.status == Status::kOk && !c.mc_check.empty()) {
      cell["status"] = std::string(status_name(Status::kArchAbsent));
      cell["evidence"] = "LLVM's assembler rejects what the call lowers to: " + c.mc_check;
    }
    if (std::optional<int64_t> imm = c.posed ? c.posed->alike_immediate() : std::nullopt; c.status == Status::kOk && imm && *imm != 0) {
      // rocKE records only what its own sweep found; a value another posing found is archdb's to say.
      if (std::find(kRockeSweep.begin(), kRockeSweep.end(), *imm) != kRockeSweep.end()) cell["probe_imm"] = *imm;
      else cell["archdb_imm"] = *imm;
    }
    if (c.posed) cell["archdb_posing"] = c.posed->describe();
    if (!c.note.empty()) cell["archdb_note"] = c.note;
    keys[c.key][c.target] = cell;
    if (c.status == Status::kNameAbsent || c.status == Status::kSignatureMismatch) continue;
    // rocKE's `opt -S` prints no declaration for a call LLVM auto-upgrades into other IR (atomicrmw).
    if (c.note.rfind("auto-upgraded: the call becomes", 0) == 0) canonical[c.key] = "(auto-upgraded)";
    else if (!canonical.contains(c.key)) canonical[c.key] = c.intrinsic;
  }
  j["keys"] = keys;
  j["canonical"] = canonical;
  return j.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";  // as json.dumps
}

}  // namespace archdb
