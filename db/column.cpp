// db/column.cpp — the column model and its JSON forms (see column.h and the data contract in README.md).
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

namespace {
constexpr std::string_view kSelects = "LLVM selects ";
}

std::string selects_rejected_instruction_evidence(const std::string& instruction, const std::string& message) {
  return std::string(kSelects) + instruction + ", which LLVM's assembler rejects for this processor: " + message;
}

bool selects_rejected_instruction(const Cell& c) {
  return c.status == Status::kArchAbsent && c.evidence.compare(0, kSelects.size(), kSelects) == 0;
}

bool Cell::operator==(const Cell& o) const {
  return key == o.key && target == o.target && status == o.status && intrinsic == o.intrinsic &&
         evidence == o.evidence && lowered_to == o.lowered_to && imm == o.imm && posing == o.posing && mc_check == o.mc_check &&
         note == o.note;
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
  if (c.status == Status::kOk) j["lowered_to"] = c.lowered_to;
  if (c.imm) j["imm"] = *c.imm;
  if (!c.posing.empty()) j["posing"] = c.posing;
  if (!c.mc_check.empty()) j["mc_check"] = c.mc_check;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

Cell cell_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("a cell must be a JSON object");
  static const std::set<std::string> kFields = {"key",  "target", "status",   "intrinsic", "evidence",
                                                "lowered_to", "imm", "posing", "mc_check", "note"};
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
  if (auto it = j.find("lowered_to"); it != j.end()) {
    if (c.status != Status::kOk) bad("lowered_to on a cell that is not ok");
    if (!it->is_array()) bad("field 'lowered_to' must be an array of strings");
    for (const auto& m : *it) {
      if (!m.is_string() || m.get<std::string>().empty()) bad("field 'lowered_to' must be an array of strings");
      c.lowered_to.push_back(m.get<std::string>());
    }
  }
  if (auto it = j.find("imm"); it != j.end()) {
    if (!it->is_number_integer()) bad("field 'imm' must be an integer");
    c.imm = it->get<int64_t>();
  }
  c.posing = opt_string(j, "posing");
  c.mc_check = opt_string(j, "mc_check");
  c.note = opt_string(j, "note");
  if (c.status != Status::kOk && (!c.posing.empty() || !c.mc_check.empty() || !c.note.empty()))
    bad("posing, mc_check and note belong to ok cells only");
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
