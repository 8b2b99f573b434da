// db/column.cpp — the column model and its JSON forms (see column.h and the data contract in docs/data.md).
#include "db/column.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb {
namespace {

struct StatusName {
  Status status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {Status::kOk, "ok"},
    {Status::kNameAbsent, "name_absent"},
    {Status::kSignatureMismatch, "signature_mismatch"},
    {Status::kArchAbsent, "arch_absent"},
    {Status::kTargetUnsupported, "target_unsupported"},
    {Status::kToolchainCrash, "toolchain_crash"},
    {Status::kToolchainTimeout, "toolchain_timeout"},
    {Status::kProbeError, "probe_error"},
};

[[noreturn]] void bad(const std::string& why) { throw std::invalid_argument(why); }

std::string need_string(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) bad(std::string("missing field '") + field + "'");
  if (!it->is_string()) bad(std::string("field '") + field + "' must be a string");
  return it->get<std::string>();
}

std::string opt_string(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) return "";
  if (!it->is_string() || it->get<std::string>().empty())
    bad(std::string("field '") + field + "' must be a non-empty string");
  return it->get<std::string>();
}

}  // namespace

std::string_view status_name(Status s) {
  for (const auto& sn : kStatusNames)
    if (sn.status == s) return sn.name;
  return "?";
}

std::optional<Status> parse_status(std::string_view name) {
  for (const auto& sn : kStatusNames)
    if (name == sn.name) return sn.status;
  return std::nullopt;
}

const std::vector<Status>& storable_statuses() {
  static const std::vector<Status> kAll = {Status::kOk,          Status::kNameAbsent,        Status::kSignatureMismatch,
                                           Status::kArchAbsent,  Status::kTargetUnsupported, Status::kToolchainCrash,
                                           Status::kToolchainTimeout};
  return kAll;
}

bool is_answer(Status s) {
  return s == Status::kOk || s == Status::kNameAbsent || s == Status::kSignatureMismatch || s == Status::kArchAbsent;
}

bool is_toolchain_failure(Status s) { return s == Status::kToolchainCrash || s == Status::kToolchainTimeout; }

bool is_plumbing_mnemonic(const std::string& mnemonic) {
  static const char* const kPlumbing[] = {"s_nop", "s_wait", "v_mov_", "s_mov_", "v_readfirstlane", "v_accvgpr_"};
  for (const char* prefix : kPlumbing)
    if (mnemonic.rfind(prefix, 0) == 0) return true;
  return false;
}

namespace {
constexpr std::pair<Cause, const char*> kCauseNames[] = {
    {Cause::kRefusal, "refusal"},
    {Cause::kDiagnostic, "diagnostic"},
    {Cause::kUndefinedSymbol, "undefined_symbol"},
    {Cause::kRejectedInstruction, "rejected_instruction"},
    {Cause::kUnencodable, "unencodable"},
    {Cause::kInstructionAbsent, "instruction_absent"},
    {Cause::kCrash, "crash"},
    {Cause::kFatalError, "fatal_error"},
    {Cause::kWorkerEnded, "worker_ended"},
    {Cause::kDeclaration, "declaration"},
    {Cause::kHang, "hang"},
    {Cause::kUnknownProcessor, "unknown_processor"},
    {Cause::kTargetDefect, "target_defect"},
};
}  // namespace

std::string_view cause_name(Cause c) {
  for (const auto& [cause, name] : kCauseNames)
    if (cause == c) return name;
  return "";
}

std::optional<Cause> parse_cause(std::string_view name) {
  for (const auto& [cause, n] : kCauseNames)
    if (name == n) return cause;
  return std::nullopt;
}

bool cause_fits(Cause c, Status s) {
  switch (c) {
    case Cause::kNone: return true;  // not known (an imported cell), or the status says it all
    case Cause::kRefusal:
    case Cause::kDiagnostic:
    case Cause::kUndefinedSymbol:
    case Cause::kRejectedInstruction:
    case Cause::kUnencodable:
    case Cause::kInstructionAbsent: return s == Status::kArchAbsent;
    case Cause::kCrash:
    case Cause::kFatalError:
    case Cause::kWorkerEnded: return s == Status::kToolchainCrash;
    case Cause::kDeclaration: return is_toolchain_failure(s);
    case Cause::kHang: return s == Status::kToolchainTimeout;
    case Cause::kUnknownProcessor:
    case Cause::kTargetDefect: return s == Status::kTargetUnsupported;
  }
  return false;
}

std::optional<int64_t> CallPosing::alike_immediate() const {
  if (imm.empty() || std::any_of(imm.begin(), imm.end(), [&](int64_t v) { return v != imm.front(); }))
    return std::nullopt;
  return imm.front();
}

std::string CallPosing::describe() const {
  std::vector<std::string> parts;
  if (!imm.empty()) {
    std::string values;
    for (size_t i = 0; i < imm.size(); ++i) values += (i ? ", " : "") + std::to_string(imm[i]);
    parts.push_back((imm.size() == 1 ? "immediate " : "immediates ") + values);
  }
  if (uniform) parts.push_back(*uniform ? "uniform operands" : "divergent operands");
  if (result_used) parts.push_back(*result_used ? "result used" : "result unused");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

namespace {
bool is_lane_scalar(const std::string& t) {
  if (t == "half" || t == "bfloat" || t == "float" || t == "double") return true;
  return t.size() > 1 && t[0] == 'i' && std::all_of(t.begin() + 1, t.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

bool is_data_operand(const std::string& callee, const std::vector<std::string>& types, const std::vector<bool>& immarg,
                     size_t i) {
  if (i >= types.size() || immarg[i]) return false;
  const std::string& type = types[i];
  size_t x = type.find(" x ");
  bool lane_type = is_lane_scalar(type) || (type.size() > 2 && type.front() == '<' && type.back() == '>' &&
                                            x != std::string::npos && is_lane_scalar(type.substr(x + 3, type.size() - x - 4)));
  if (!lane_type) return false;
  if (callee.rfind("llvm.amdgcn.image.", 0) != 0) return true;
  // An image intrinsic's descriptors: the <8 x i32>/<4 x i32> run right before its trailing immediates.
  size_t at = types.size();
  while (at > 0 && (immarg[at - 1] || types[at - 1] == "metadata")) --at;
  for (; at > 0; --at) {
    if (immarg[at - 1] || (types[at - 1] != "<8 x i32>" && types[at - 1] != "<4 x i32>")) break;
    if (at - 1 == i) return false;
  }
  return true;
}

nlohmann::ordered_json posing_to_json(const CallPosing& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!p.imm.empty()) j["imm"] = p.imm;
  if (p.uniform) j["operands"] = *p.uniform ? "uniform" : "divergent";
  if (p.result_used) j["result"] = *p.result_used ? "used" : "unused";
  return j;
}

CallPosing posing_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("field 'posed' must be a JSON object");
  CallPosing p;
  for (const auto& [name, value] : j.items()) {
    if (name == "imm") {
      if (!value.is_array() || value.empty()) bad("'posed.imm' must be a non-empty array of integers");
      for (const auto& v : value) {
        if (!v.is_number_integer()) bad("'posed.imm' must be a non-empty array of integers");
        p.imm.push_back(v.get<int64_t>());
      }
    } else if (name == "operands") {
      if (value != "uniform" && value != "divergent") bad("'posed.operands' must be \"uniform\" or \"divergent\"");
      p.uniform = value == "uniform";
    } else if (name == "result") {
      if (value != "used" && value != "unused") bad("'posed.result' must be \"used\" or \"unused\"");
      p.result_used = value == "used";
    } else {
      bad("unknown field 'posed." + name + "'");
    }
  }
  return p;
}

nlohmann::ordered_json declared_to_json(const DeclaredSupport& d) {
  nlohmann::ordered_json j;
  j["requires"] = d.features;
  j["holds"] = d.holds;
  return j;
}

DeclaredSupport declared_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.size() != 2 || !j.contains("requires") || !j["requires"].is_string() ||
      j["requires"].get<std::string>().empty() || !j.contains("holds") || !j["holds"].is_boolean())
    bad("field 'declared' must be {\"requires\": \"<features>\", \"holds\": true|false}");
  return DeclaredSupport{j["requires"].get<std::string>(), j["holds"].get<bool>()};
}

bool Cell::operator==(const Cell& o) const {
  return key == o.key && target == o.target && status == o.status && intrinsic == o.intrinsic &&
         evidence == o.evidence && cause == o.cause && lowered_to == o.lowered_to && posed == o.posed &&
         mc_check == o.mc_check && note == o.note && declared == o.declared;
}

nlohmann::ordered_json Provenance::posing() const {
  nlohmann::ordered_json p;
  p["triple"] = triple;
  p["opt_level"] = opt_level;
  p["code_object_version"] = code_object_version;
  p["timeout_s"] = timeout_s;
  p["retries"] = retries;
  p["immarg_sweep"] = immarg_sweep;
  if (!posings.empty()) p["posings"] = posings;
  return p;
}

bool Provenance::operator==(const Provenance& o) const {
  return provenance_to_json(*this) == provenance_to_json(o);
}

void Column::sort() {
  std::sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
    return a.key != b.key ? a.key < b.key : a.target < b.target;
  });
}

void Column::recount() {
  provenance.counts.clear();
  for (Status s : storable_statuses()) provenance.counts[std::string(status_name(s))] = 0;
  std::set<std::string> keys;
  for (const auto& c : cells) {
    provenance.counts[std::string(status_name(c.status))]++;
    keys.insert(c.key);
  }
  provenance.keys = static_cast<int>(keys.size());
}

const Cell* Column::find(const std::string& key, const std::string& target) const {
  auto it = std::lower_bound(cells.begin(), cells.end(), std::make_pair(key, target),
                             [](const Cell& c, const std::pair<std::string, std::string>& kt) {
                               return c.key != kt.first ? c.key < kt.first : c.target < kt.second;
                             });
  if (it != cells.end() && it->key == key && it->target == target) return &*it;
  return nullptr;
}

nlohmann::ordered_json cell_to_json(const Cell& c) {
  nlohmann::ordered_json j;
  j["key"] = c.key;
  j["target"] = c.target;
  j["status"] = std::string(status_name(c.status));
  j["intrinsic"] = c.intrinsic;
  if (c.status != Status::kOk) j["evidence"] = c.evidence;
  if (c.cause != Cause::kNone) j["cause"] = std::string(cause_name(c.cause));
  if (c.status == Status::kOk) j["lowered_to"] = c.lowered_to;
  if (c.posed && !c.posed->empty()) j["posed"] = posing_to_json(*c.posed);
  if (c.declared) j["declared"] = declared_to_json(*c.declared);
  if (!c.mc_check.empty()) j["mc_check"] = c.mc_check;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

Cell cell_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("a cell must be a JSON object");
  static const std::set<std::string> kFields = {"key",        "target", "status",   "intrinsic", "evidence", "cause",
                                                "lowered_to", "posed",  "mc_check", "note",      "declared"};
  for (const auto& [name, value] : j.items())
    if (!kFields.count(name)) bad("unknown field '" + name + "'");
  Cell c;
  c.key = need_string(j, "key");
  if (!is_valid_key(c.key)) bad("invalid key '" + c.key + "'");
  c.target = need_string(j, "target");
  if (!is_valid_target_name(c.target)) bad("invalid target '" + c.target + "'");
  std::string st = need_string(j, "status");
  auto status = parse_status(st);
  if (!status) bad("unknown status '" + st + "'");
  if (*status == Status::kProbeError) bad("probe_error is a defect of the probe and is never stored");
  c.status = *status;
  c.intrinsic = need_string(j, "intrinsic");
  if (c.intrinsic.empty()) bad("empty 'intrinsic'");
  c.evidence = opt_string(j, "evidence");
  if (c.status != Status::kOk && c.evidence.empty()) bad("status " + st + " without evidence");
  if (c.status == Status::kOk && !c.evidence.empty()) bad("an ok cell carries no evidence");
  if (std::string cause = opt_string(j, "cause"); !cause.empty()) {
    std::optional<Cause> parsed = parse_cause(cause);
    if (!parsed) bad("unknown cause '" + cause + "'");
    c.cause = *parsed;
  }
  if (!cause_fits(c.cause, c.status))
    bad("cause '" + std::string(cause_name(c.cause)) + "' does not belong to status " + st);
  if (auto it = j.find("lowered_to"); it != j.end()) {
    if (c.status != Status::kOk) bad("lowered_to on a cell that is not ok");
    if (!it->is_array()) bad("field 'lowered_to' must be an array of strings");
    for (const auto& m : *it) {
      if (!m.is_string() || m.get<std::string>().empty()) bad("field 'lowered_to' must be an array of strings");
      c.lowered_to.push_back(m.get<std::string>());
    }
  }
  if (auto it = j.find("posed"); it != j.end()) {
    CallPosing posed = posing_from_json(*it);
    if (posed.empty()) bad("field 'posed' is empty (a call with nothing to pose has no 'posed')");
    c.posed = std::move(posed);
  }
  if (auto it = j.find("declared"); it != j.end()) c.declared = declared_from_json(*it);
  c.mc_check = opt_string(j, "mc_check");
  c.note = opt_string(j, "note");
  if (c.status != Status::kOk && (!c.mc_check.empty() || !c.note.empty()))
    bad("mc_check and note belong to ok cells only");
  return c;
}

nlohmann::ordered_json provenance_to_json(const Provenance& p) {
  nlohmann::ordered_json j;
  j["schema"] = Provenance::kSchema;
  j["flavor"] = p.flavor;
  if (!p.measured) {
    j["measured"] = false;
    j["stands_for"] = p.stands_for;
    j["how_to_measure"] = p.how_to_measure;
    j["targets"] = p.targets;
    return j;
  }
  nlohmann::ordered_json tc;
  tc["llvm_version"] = p.llvm_version;
  tc["llvm_major"] = p.llvm_major;
  tc["identity"] = p.identity;
  if (!p.package.empty()) tc["package"] = p.package;
  tc["prerelease"] = p.prerelease;
  j["toolchain"] = tc;
  j["generator"] = {{"name", "archdb"}, {"version", p.generator_version}};
  j["probe"] = p.posing();
  j["targets"] = p.targets;
  j["keys"] = p.keys;
  nlohmann::ordered_json counts;
  for (Status s : storable_statuses()) {
    std::string name(status_name(s));
    auto it = p.counts.find(name);
    counts[name] = it == p.counts.end() ? 0 : it->second;
  }
  j["counts"] = counts;
  return j;
}

Provenance provenance_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("column.json must hold a JSON object");
  Provenance p;
  std::string schema = need_string(j, "schema");
  if (schema != Provenance::kSchema) bad("unsupported schema '" + schema + "' (expected " + Provenance::kSchema + ")");
  p.flavor = need_string(j, "flavor");
  if (j.contains("measured")) {
    if (!j.at("measured").is_boolean() || j.at("measured").get<bool>()) bad("'measured' may only be false (a descriptor)");
    p.measured = false;
    p.stands_for = need_string(j, "stands_for");
    try {
      p.how_to_measure = j.at("how_to_measure").get<std::vector<std::string>>();
      p.targets = j.at("targets").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      bad(std::string("malformed descriptor: ") + e.what());
    }
    if (p.how_to_measure.empty()) bad("a descriptor must say how to measure it ('how_to_measure')");
    return p;
  }
  try {
    const auto& tc = j.at("toolchain");
    p.llvm_version = need_string(tc, "llvm_version");
    p.llvm_major = tc.at("llvm_major").get<int>();
    p.identity = need_string(tc, "identity");
    if (tc.contains("package")) p.package = need_string(tc, "package");
    p.prerelease = tc.at("prerelease").get<bool>();
    const auto& gen = j.at("generator");
    if (need_string(gen, "name") != "archdb") bad("generator is not archdb");
    p.generator_version = gen.at("version").get<int>();
    const auto& pr = j.at("probe");
    p.triple = need_string(pr, "triple");
    p.opt_level = need_string(pr, "opt_level");
    p.code_object_version = pr.at("code_object_version").get<int>();
    p.timeout_s = pr.at("timeout_s").get<int>();
    p.retries = pr.at("retries").get<int>();
    p.immarg_sweep = pr.at("immarg_sweep").get<std::vector<int64_t>>();
    if (pr.contains("posings")) p.posings = pr.at("posings").get<std::vector<std::string>>();
    p.targets = j.at("targets").get<std::vector<std::string>>();
    p.keys = j.at("keys").get<int>();
    for (const auto& [name, n] : j.at("counts").items()) {
      auto s = parse_status(name);
      if (!s || *s == Status::kProbeError) bad("counts has unknown status '" + name + "'");
      p.counts[name] = n.get<int>();
    }
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("malformed provenance: ") + e.what());
  }
  return p;
}

}  // namespace archdb
