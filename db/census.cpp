// db/census.cpp — the census model, its committed text form, its export and its tables (see census.h).
#include "db/census.h"


#include <algorithm>
#include <set>
#include <stdexcept>

#include "db/file_stamps.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "schema/catalog.h"
#include "schema/targets.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"
#include "support/json_depth.h"

namespace archdb {
namespace fs = std::filesystem;

namespace {

constexpr auto kReplaceInvalid = nlohmann::json::error_handler_t::replace;
constexpr const char* kTitle =
    "# archdb census: every llvm.amdgcn.* intrinsic of this LLVM on every AMDGPU processor it knows "
    "(README.md, \"The census\")";
constexpr const char* kNotProbed = "not_probed";

bool cell_less(const Cell& a, const Cell& b) { return a.key != b.key ? a.key < b.key : a.target < b.target; }

// The part of a cell a group shares: everything but key and target (and the intrinsic, where it is the key).
nlohmann::ordered_json cell_detail(const Cell& c) {
  nlohmann::ordered_json j = cell_to_json(c);
  j.erase("key");
  j.erase("target");
  j.erase("status");
  if (c.intrinsic == c.key) j.erase("intrinsic");
  if (c.status == Status::kOk && c.lowered_to.empty()) j.erase("lowered_to");
  return j;
}

nlohmann::ordered_json provenance_json(const CensusProvenance& p) {
  nlohmann::ordered_json j;
  j["schema"] = CensusProvenance::kSchema;
  j["flavor"] = p.flavor;
  j["llvm_version"] = p.llvm_version;
  j["identity"] = p.identity;
  if (!p.package.empty()) j["package"] = p.package;
  j["prerelease"] = p.prerelease;
  j["generator"] = p.generator_version;
  j["probe"] = p.probe;
  j["processors"] = p.processors;
  if (!p.processor_notes.empty()) j["processor_notes"] = p.processor_notes;
  j["intrinsics"] = p.intrinsics;
  j["instantiations"] = p.instantiations;
  j["not_probed"] = p.not_probed;
  nlohmann::ordered_json counts;
  for (Status s : storable_statuses()) {
    auto it = p.counts.find(std::string(status_name(s)));
    counts[std::string(status_name(s))] = it == p.counts.end() ? 0 : it->second;
  }
  j["counts"] = counts;
  return j;
}

CensusProvenance provenance_from(const nlohmann::ordered_json& j) {
  CensusProvenance p;
  if (j.value("schema", "") != CensusProvenance::kSchema)
    throw std::invalid_argument(std::string("schema must be ") + CensusProvenance::kSchema);
  try {
    p.flavor = j.at("flavor").get<std::string>();
    p.llvm_version = j.at("llvm_version").get<std::string>();
    p.identity = j.at("identity").get<std::string>();
    if (j.contains("package")) p.package = j.at("package").get<std::string>();
    p.prerelease = j.at("prerelease").get<bool>();
    p.generator_version = j.at("generator").get<int>();
    p.probe = j.at("probe");
    p.processors = j.at("processors").get<std::vector<std::string>>();
    if (j.contains("processor_notes"))
      p.processor_notes = j.at("processor_notes").get<std::map<std::string, std::string>>();
    p.intrinsics = j.at("intrinsics").get<int>();
    p.instantiations = j.at("instantiations").get<int>();
    p.not_probed = j.at("not_probed").get<int>();
    for (const auto& [name, n] : j.at("counts").items()) {
      auto s = parse_status(name);
      if (!s || *s == Status::kProbeError) throw std::invalid_argument("counts has unknown status '" + name + "'");
      p.counts[name] = n.get<int>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed provenance: ") + e.what());
  }
  if (!is_valid_flavor(p.flavor)) throw std::invalid_argument("invalid flavor '" + p.flavor + "'");
  for (const auto& [processor, note] : p.processor_notes)
    if (std::find(p.processors.begin(), p.processors.end(), processor) == p.processors.end() || note.empty())
      throw std::invalid_argument("processor_notes names '" + processor + "', which is not in the processors list");
  return p;
}

// ---- SQLite, for the census tables ----


Cell cell_from_group(const std::string& key, const std::string& target, const std::string& status,
                     const nlohmann::json& detail);

// Reads the groups a query yields (key, status, targets, detail) into cells: all of them, or only `target`'s.
void read_groups(Stmt& q, std::vector<Cell>& out, const std::string& target = "") {
  while (q.step()) {
    std::string key = q.text(0), status = q.text(1), targets = q.text(2);
    nlohmann::json detail = stored_json(q.db(), q.text(3));
    for (const auto& t : split(targets, ','))
      if (target.empty() || t == target) out.push_back(cell_from_group(key, t, status, detail));
  }
}

}  // namespace

std::string full_intrinsic_name(const std::string& name) {
  static const std::string kPrefix = "llvm.amdgcn.";
  return name.rfind(kPrefix, 0) == 0 ? name : kPrefix + name;
}

namespace {

// The cells of one instantiation (cells[begin, end)) grouped as the committed form groups them.
struct Group {
  Status status;
  std::vector<std::string> targets;
  std::string detail;  // JSON
};

std::vector<Group> group_cells(const std::vector<Cell>& cells, size_t begin, size_t end) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (size_t c = begin; c < end; ++c) {
    const Cell& cell = cells[c];
    std::string detail = cell_detail(cell).dump(-1, ' ', false, kReplaceInvalid);
    auto [it, fresh] = index.emplace(std::string(status_name(cell.status)) + "\t" + detail, groups.size());
    if (fresh) groups.push_back({cell.status, {}, detail});
    groups[it->second].targets.push_back(cell.target);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    if (a.status != b.status) return static_cast<int>(a.status) < static_cast<int>(b.status);
    return a.targets.front() < b.targets.front();
  });
  return groups;
}

// One cell of a group, validated as a catalog cell is. Throws std::invalid_argument.
Cell cell_from_group(const std::string& key, const std::string& target, const std::string& status,
                     const nlohmann::json& detail) {
  if (!detail.is_object()) throw std::invalid_argument("a group's detail must be a JSON object");
  nlohmann::json j = detail;
  j["key"] = "census";  // validated as a cell; the real key is the instantiation's
  j["target"] = target;
  j["status"] = status;
  if (!j.contains("intrinsic")) j["intrinsic"] = key;
  if (status == "ok" && !j.contains("lowered_to")) j["lowered_to"] = nlohmann::json::array();
  Cell cell = cell_from_json(j);
  cell.key = key;
  return cell;
}

// The range of cells of `key` in sorted `cells`, from `from` on.
std::pair<size_t, size_t> range_of(const std::vector<Cell>& cells, const std::string& key, size_t from) {
  size_t b = from;
  while (b < cells.size() && cells[b].key < key) ++b;
  size_t e = b;
  while (e < cells.size() && cells[e].key == key) ++e;
  return {b, e};
}

}  // namespace

void Census::sort() {
  std::sort(instantiations.begin(), instantiations.end(),
            [](const CensusInstantiation& a, const CensusInstantiation& b) { return a.key < b.key; });
  std::sort(cells.begin(), cells.end(), cell_less);
  std::sort(not_probed.begin(), not_probed.end(),
            [](const CensusNotProbed& a, const CensusNotProbed& b) { return a.intrinsic < b.intrinsic; });
  std::sort(provenance.processors.begin(), provenance.processors.end());
}

void Census::recount() {
  provenance.counts.clear();
  for (Status s : storable_statuses()) provenance.counts[std::string(status_name(s))] = 0;
  for (const auto& c : cells) provenance.counts[std::string(status_name(c.status))]++;
  provenance.instantiations = static_cast<int>(instantiations.size());
  provenance.not_probed = static_cast<int>(not_probed.size());
}

const CensusInstantiation* Census::instantiation(const std::string& key) const {
  auto it = std::lower_bound(instantiations.begin(), instantiations.end(), key,
                             [](const CensusInstantiation& i, const std::string& k) { return i.key < k; });
  return it != instantiations.end() && it->key == key ? &*it : nullptr;
}

const Cell* Census::find(const std::string& key, const std::string& target) const {
  Cell probe;
  probe.key = key;
  probe.target = target;
  auto it = std::lower_bound(cells.begin(), cells.end(), probe, cell_less);
  return it != cells.end() && it->key == key && it->target == target ? &*it : nullptr;
}

std::string render_census(const Census& census) {
  const CensusProvenance& p = census.provenance;
  std::string out = std::string(kTitle) + "\n";
  nlohmann::ordered_json prov = provenance_json(p);
  for (auto it = prov.begin(); it != prov.end(); ++it) {
    std::string value = it.value().is_string() ? it.value().get<std::string>()
                                               : it.value().dump(-1, ' ', false, kReplaceInvalid);
    out += "# " + it.key() + ": " + value + "\n";
  }
  size_t c = 0;
  for (const auto& inst : census.instantiations) {
    out += inst.key + "\t";
    out += inst.overload_types.empty() ? "-" : nlohmann::json(inst.overload_types).dump(-1, ' ', false, kReplaceInvalid);
    auto [begin, end] = range_of(census.cells, inst.key, c);
    c = end;
    for (const Group& g : group_cells(census.cells, begin, end))
      out += "\t" + std::string(status_name(g.status)) + " " + join(g.targets, ",") + " " + g.detail;
    out += "\n";
  }
  for (const auto& np : census.not_probed) out += std::string(kNotProbed) + "\t" + np.intrinsic + "\t" + np.reason + "\n";
  return out;
}

Census parse_census(const std::string& text, const std::string& label) {
  Census census;
  nlohmann::ordered_json prov = nlohmann::ordered_json::object();
  size_t pos = 0;
  int lineno = 0;
  bool in_header = true;
  std::set<std::string> processors;
  auto fail = [&](const std::string& why) -> Error { return input_error(label + ":" + std::to_string(lineno) + ": " + why); };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    ++lineno;
    if (nl == std::string::npos) throw fail("last line is not terminated by a newline");
    if (nl - pos > kMaxLineBytes) throw fail(line_too_long(nl - pos));
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (lineno == 1) {
      if (line.rfind("# archdb census", 0) != 0) throw fail("not an archdb census (expected the title line)");
      continue;
    }
    if (in_header && line.rfind("# ", 0) == 0) {
      size_t colon = line.find(": ", 2);
      if (colon == std::string::npos) throw fail("malformed header line");
      std::string name = line.substr(2, colon - 2), value = line.substr(colon + 2);
      check_json_depth(value, label + ":" + std::to_string(lineno));
      nlohmann::ordered_json v = nlohmann::ordered_json::parse(value, nullptr, false);
      if (v.is_discarded() || name == "flavor" || name == "schema" || name == "llvm_version" || name == "identity" ||
          name == "package")
        v = value;
      prov[name] = v;
      continue;
    }
    if (in_header) {
      in_header = false;
      try {
        census.provenance = provenance_from(prov);
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
      processors.insert(census.provenance.processors.begin(), census.provenance.processors.end());
    }
    std::vector<std::string> fields = split(line, '\t');
    if (fields[0] == kNotProbed) {
      if (fields.size() != 3 || fields[1].empty() || fields[2].empty()) throw fail("malformed not_probed line");
      if (!census.not_probed.empty() && census.not_probed.back().intrinsic >= fields[1])
        throw fail("not_probed lines are not sorted at " + fields[1]);
      census.not_probed.push_back({fields[1], fields[2]});
      continue;
    }
    if (!census.not_probed.empty()) throw fail("an instantiation after the not_probed lines");
    if (fields.size() < 3) throw fail("an instantiation line needs a key, its types and at least one group");
    CensusInstantiation inst;
    inst.key = fields[0];
    if (inst.key.rfind("llvm.amdgcn.", 0) != 0) throw fail("key '" + inst.key + "' is not an llvm.amdgcn.* name");
    if (!census.instantiations.empty() && census.instantiations.back().key >= inst.key)
      throw fail("instantiations are not sorted at " + inst.key);
    if (fields[1] != "-") {
      check_json_depth(fields[1], label + ":" + std::to_string(lineno));
      nlohmann::json types = nlohmann::json::parse(fields[1], nullptr, false);
      if (!types.is_array() || types.empty()) throw fail("overload types must be '-' or a JSON array of types");
      for (const auto& t : types) {
        if (!t.is_string()) throw fail("overload types must be strings");
        inst.overload_types.push_back(t.get<std::string>());
      }
    }
    // The intrinsic: the key without its mangled overload types (one dot-separated suffix each).
    inst.intrinsic = inst.key;
    for (size_t n = 0; n < inst.overload_types.size(); ++n) {
      size_t dot = inst.intrinsic.rfind('.');
      if (dot == std::string::npos) break;
      inst.intrinsic.resize(dot);
    }
    if (inst.intrinsic.rfind("llvm.amdgcn.", 0) != 0 || inst.intrinsic.size() <= 12)
      throw fail("key '" + inst.key + "' does not end in one mangled suffix per overload type");
    std::set<std::string> seen;
    for (size_t g = 2; g < fields.size(); ++g) {
      const std::string& group = fields[g];
      size_t s1 = group.find(' ');
      size_t s2 = s1 == std::string::npos ? s1 : group.find(' ', s1 + 1);
      if (s2 == std::string::npos) throw fail("malformed group '" + group.substr(0, 60) + "'");
      std::string status = group.substr(0, s1);
      check_json_depth(std::string_view(group).substr(s2 + 1), label + ":" + std::to_string(lineno));
      nlohmann::json detail = nlohmann::json::parse(group.substr(s2 + 1), nullptr, false);
      for (const auto& target : split(group.substr(s1 + 1, s2 - s1 - 1), ',')) {
        if (!processors.count(target)) throw fail("processor '" + target + "' is not in the header's list");
        if (!seen.insert(target).second) throw fail("processor " + target + " appears twice for " + inst.key);
        try {
          census.cells.push_back(cell_from_group(inst.key, target, status, detail));
        } catch (const std::invalid_argument& e) {
          throw fail(inst.key + "/" + target + ": " + e.what());
        }
      }
    }
    if (seen.size() != processors.size())
      throw fail(inst.key + " has " + std::to_string(seen.size()) + " of " + std::to_string(processors.size()) +
                 " processors");
    census.instantiations.push_back(std::move(inst));
  }
  if (in_header) throw fail("no census rows");
  CensusProvenance stated = census.provenance;
  census.sort();
  census.recount();
  if (stated.counts != census.provenance.counts || stated.instantiations != census.provenance.instantiations ||
      stated.not_probed != census.provenance.not_probed)
    throw input_error(label + ": counts, instantiations or not_probed in the header disagree with the rows");
  return census;
}

std::string render_census_jsonl(const Census& census) {
  std::string out;
  size_t c = 0;
  for (const auto& inst : census.instantiations) {
    while (c < census.cells.size() && census.cells[c].key < inst.key) ++c;
    for (; c < census.cells.size() && census.cells[c].key == inst.key; ++c) {
      nlohmann::ordered_json j = cell_to_json(census.cells[c]);
      j["overload_types"] = inst.overload_types;
      j["source"] = "census";
      out += j.dump(-1, ' ', false, kReplaceInvalid) + "\n";
    }
  }
  return out;
}

std::optional<Census> read_census_file(const fs::path& data_root, const std::string& flavor) {
  fs::path path = data_root / flavor / kCensusFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  Census census = parse_census(read_file(path), path.lexically_normal().string());
  if (census.provenance.flavor != flavor)
    throw input_error(path.string() + ": the census names flavor '" + census.provenance.flavor + "' but the folder is '" +
                      flavor + "'");
  return census;
}

void write_census_file(const fs::path& data_root, const Census& census) {
  fs::path dir = data_root / census.provenance.flavor;
  fs::create_directories(dir);
  write_file_atomically(dir / kCensusFile, render_census(census));
}

// ---- the store ----

void store_census(Store& store, const Census& census, const std::string& source_digest) {
  sqlite3* db = store.handle();
  store.before_write();
  Transaction tx(db);
  Stmt del(db, "DELETE FROM census WHERE flavor = ?1");
  del.bind(1, census.provenance.flavor).run();
  Stmt ins(db, "INSERT INTO census(flavor, provenance, source_digest) VALUES (?1, ?2, ?3)");
  ins.bind(1, census.provenance.flavor).bind(2, provenance_json(census.provenance).dump(-1, ' ', false, kReplaceInvalid));
  ins.bind_or_null(3, source_digest).run();
  Stmt inst(db, "INSERT INTO census_instantiation(flavor, key, intrinsic, overload_types) VALUES (?1, ?2, ?3, ?4)");
  for (const auto& i : census.instantiations)
    inst.bind(1, census.provenance.flavor).bind(2, i.key).bind(3, i.intrinsic).bind(4, nlohmann::json(i.overload_types).dump()).run();
  Stmt group(db, "INSERT INTO census_group(flavor, key, status, targets, detail) VALUES (?1, ?2, ?3, ?4, ?5)");
  size_t c = 0;
  for (const auto& i : census.instantiations) {
    auto [begin, end] = range_of(census.cells, i.key, c);
    c = end;
    for (size_t x = begin; x < end; ++x)
      if (census.cells[x].status == Status::kProbeError)
        throw internal_error("refusing to store a probe_error census cell (" + i.key + "/" + census.cells[x].target + ")");
    for (const Group& g : group_cells(census.cells, begin, end))
      group.bind(1, census.provenance.flavor).bind(2, i.key).bind(3, std::string(status_name(g.status)))
          .bind(4, join(g.targets, ",")).bind(5, g.detail).run();
  }
  Stmt np(db, "INSERT INTO census_not_probed(flavor, intrinsic, reason) VALUES (?1, ?2, ?3)");
  for (const auto& n : census.not_probed) np.bind(1, census.provenance.flavor).bind(2, n.intrinsic).bind(3, n.reason).run();
  tx.commit();
}

std::vector<std::string> census_flavors(const Store& store) {
  std::vector<std::string> out;
  Stmt q(store.handle(), "SELECT flavor FROM census ORDER BY flavor");
  while (q.step()) out.push_back(q.text(0));
  return out;
}

std::optional<Census> load_census(const Store& store, const std::string& flavor) {
  sqlite3* db = store.handle();
  Census census;
  {
    Stmt q(db, "SELECT provenance FROM census WHERE flavor = ?1");
    q.bind(1, flavor);
    if (!q.step()) return std::nullopt;
    try {
      census.provenance = provenance_from(stored_ordered_json(db, q.text(0)));
    } catch (const std::exception& e) {
      throw input_error(store.path().string() + ": census of " + flavor + ": " + e.what());
    }
  }
  Transaction tx(db, "BEGIN");  // one snapshot for the three reads
  Stmt qi(db, "SELECT key, intrinsic, overload_types FROM census_instantiation WHERE flavor = ?1 ORDER BY key");
  qi.bind(1, flavor);
  while (qi.step())
    census.instantiations.push_back({qi.text(0), qi.text(1), stored_string_list(db, qi.text(2))});
  Stmt qc(db, "SELECT key, status, targets, detail FROM census_group WHERE flavor = ?1");
  qc.bind(1, flavor);
  read_groups(qc, census.cells);
  std::sort(census.cells.begin(), census.cells.end(), cell_less);
  Stmt qn(db, "SELECT intrinsic, reason FROM census_not_probed WHERE flavor = ?1 ORDER BY intrinsic");
  qn.bind(1, flavor);
  while (qn.step()) census.not_probed.push_back({qn.text(0), qn.text(1)});
  tx.commit();
  return census;
}

CensusMatch find_census(const Store& store, const std::string& flavor, const std::string& name) {
  sqlite3* db = store.handle();
  CensusMatch m;
  std::string full = full_intrinsic_name(name);
  Stmt qi(db, "SELECT key, intrinsic, overload_types FROM census_instantiation WHERE flavor = ?1 AND "
               "(key = ?2 OR intrinsic = ?2) ORDER BY key");
  qi.bind(1, flavor).bind(2, full);
  while (qi.step())
    m.instantiations.push_back({qi.text(0), qi.text(1), stored_string_list(db, qi.text(2))});
  for (const auto& i : m.instantiations) {
    Stmt qc(db, "SELECT key, status, targets, detail FROM census_group WHERE flavor = ?1 AND key = ?2");
    qc.bind(1, flavor).bind(2, i.key);
    read_groups(qc, m.cells);
  }
  std::sort(m.cells.begin(), m.cells.end(), cell_less);
  Stmt qn(db, "SELECT intrinsic, reason FROM census_not_probed WHERE flavor = ?1 AND intrinsic = ?2");
  qn.bind(1, flavor).bind(2, full);
  if (qn.step()) m.not_probed = CensusNotProbed{qn.text(0), qn.text(1)};
  return m;
}

std::optional<Cell> intrinsic_answer(const std::vector<CensusInstantiation>& instantiations, const std::vector<Cell>& cells,
                                     const std::string& target) {
  const Cell* ok = nullptr;
  const Cell* refusal = nullptr;
  const Cell* non_answer = nullptr;
  std::vector<std::string> weighed;
  for (const CensusInstantiation& inst : instantiations)
    for (const Cell& c : cells) {
      if (c.key != inst.key || c.target != target) continue;
      weighed.push_back(inst.key);
      const Cell*& slot = c.status == Status::kOk ? ok : is_answer(c.status) ? refusal : non_answer;
      if (!slot) slot = &c;
    }
  const Cell* chosen = ok ? ok : non_answer ? non_answer : refusal;
  if (!chosen) return std::nullopt;
  Cell answer = *chosen;
  if (weighed.size() > 1) {
    std::string of = "of " + std::to_string(weighed.size()) + " instantiations (" + join(weighed, ", ") + "): ";
    answer.evidence = of + (ok ? answer.key + " lowers" : non_answer ? answer.key + " has no answer"
                                                                   : "every one refused, " + answer.key + " thus") +
                      (answer.evidence.empty() ? "" : "; " + answer.evidence);
  }
  return answer;
}

std::map<std::string, Cell> intrinsic_answers(const std::vector<CensusInstantiation>& instantiations,
                                              const std::vector<Cell>& cells, const std::vector<std::string>& only_targets) {
  std::set<std::string> targets;
  for (const Cell& c : cells)
    if (only_targets.empty() || std::find(only_targets.begin(), only_targets.end(), c.target) != only_targets.end())
      targets.insert(c.target);
  std::map<std::string, Cell> out;
  for (const std::string& t : targets)
    if (std::optional<Cell> c = intrinsic_answer(instantiations, cells, t)) out.emplace(t, std::move(*c));
  return out;
}

std::optional<Cell> census_cell(const Store& store, const std::string& flavor, const std::string& name,
                                const std::string& target) {
  Stmt q(store.handle(), "SELECT key, status, targets, detail FROM census_group WHERE flavor = ?1 AND key = ?2");
  q.bind(1, flavor).bind(2, name);
  std::vector<Cell> found;
  read_groups(q, found, target);
  if (found.empty()) return std::nullopt;
  return found.front();
}

namespace {
// How the table keys a call: its posing as the data contract writes it, '' for the census's way.
std::string call_text(const std::optional<CallPosing>& call) { return call ? posing_to_json(*call).dump() : ""; }

Cell on_demand_from(const Store& store, const std::string& text, const std::string& key, const std::string& target) {
  try {
    nlohmann::json j = stored_json(store.handle(), text);
    j["key"] = "census";  // validated as a cell; the real key is the instantiation's
    Cell cell = cell_from_json(j);
    cell.key = key;
    return cell;
  } catch (const std::invalid_argument& e) {
    throw input_error(store.path().string() + ": on-demand cell " + key + "/" + target + ": " + e.what());
  }
}
}  // namespace

void store_on_demand_cell(Store& store, const std::string& flavor, const Cell& cell, const std::optional<CallPosing>& call,
                          const std::string& identity) {
  store.before_write();
  Transaction tx(store.handle());
  Stmt q(store.handle(),
         "INSERT OR REPLACE INTO on_demand_call(flavor, key, target, call, cell, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  q.bind(1, flavor).bind(2, cell.key).bind(3, cell.target).bind(4, call_text(call)).bind(5, cell_to_json(cell).dump());
  q.bind(6, identity);
  q.run();
  tx.commit();
}

std::optional<Cell> on_demand_cell(const Store& store, const std::string& flavor, const std::string& key,
                                   const std::string& target, const std::optional<CallPosing>& call) {
  Stmt q(store.handle(), "SELECT cell FROM on_demand_call WHERE flavor = ?1 AND key = ?2 AND target = ?3 AND call = ?4");
  q.bind(1, flavor).bind(2, key).bind(3, target).bind(4, call_text(call));
  if (!q.step()) return std::nullopt;
  return on_demand_from(store, q.text(0), key, target);
}

const Cell* OnDemandCells::find(const std::string& key, const std::string& target,
                                const std::optional<CallPosing>& call) const {
  auto it = cells.find({key, target, call_text(call)});
  return it == cells.end() ? nullptr : &it->second;
}

OnDemandCells load_on_demand_cells(const Store& store, const std::string& flavor) {
  OnDemandCells out;
  Stmt q(store.handle(), "SELECT key, target, call, cell FROM on_demand_call WHERE flavor = ?1");
  q.bind(1, flavor);
  while (q.step()) out.cells.emplace(std::make_tuple(q.text(0), q.text(1), q.text(2)), on_demand_from(store, q.text(3), q.text(0), q.text(1)));
  return out;
}

std::vector<std::string> intrinsic_base_candidates(const std::string& name) {
  std::vector<std::string> out;
  const size_t prefix = std::string("llvm.amdgcn.").size();
  for (size_t end = name.size(); end > prefix; end = name.rfind('.', end - 1)) {
    out.push_back(name.substr(0, end));
    if (end == std::string::npos) break;
  }
  return out;
}

std::optional<bool> census_has_intrinsic_of(const Store& store, const std::string& flavor, const std::string& name) {
  Stmt head(store.handle(), "SELECT 1 FROM census WHERE flavor = ?1");
  head.bind(1, flavor);
  if (!head.step()) return std::nullopt;
  for (const std::string& base : intrinsic_base_candidates(name)) {
    Stmt q(store.handle(),
           "SELECT 1 FROM census_instantiation WHERE flavor = ?1 AND (key = ?2 OR intrinsic = ?2) "
           "UNION ALL SELECT 1 FROM census_not_probed WHERE flavor = ?1 AND intrinsic = ?2 LIMIT 1");
    q.bind(1, flavor).bind(2, base);
    if (q.step()) return true;
  }
  return false;
}

void sync_census_from_data(Store& store, const fs::path& data_root) {
  std::set<std::string> committed;
  std::error_code ec;
  if (fs::is_directory(data_root, ec)) {
    for (const auto& e : fs::directory_iterator(data_root, ec)) {
      std::string flavor = e.path().filename().string();
      if (flavor.empty() || flavor[0] == '.' || !fs::exists(e.path() / kCensusFile, ec)) continue;
      committed.insert(flavor);
      // The digest from the file's stat stamp when it did not change: the file itself is read only if it did.
      std::string text;
      bool read = false;
      std::string digest = stamped_digest(store, "census:" + flavor, {e.path() / kCensusFile}, [&] {
        text = read_file(e.path() / kCensusFile);
        read = true;
        return digest_hex(text);
      });
      {
        Stmt q(store.handle(), "SELECT source_digest FROM census WHERE flavor = ?1");
        q.bind(1, flavor);
        if (q.step() && q.text(0) == digest) continue;
      }
      if (!read) {
        text = read_file(e.path() / kCensusFile);
        digest = digest_hex(text);
      }
      Census census = parse_census(text, (e.path() / kCensusFile).lexically_normal().string());
      if (census.provenance.flavor != flavor)
        throw input_error((e.path() / kCensusFile).string() + ": the census names flavor '" + census.provenance.flavor +
                          "' but the folder is '" + flavor + "'");
      store_census(store, census, digest);
    }
  }
  for (const auto& flavor : census_flavors(store)) {
    if (committed.count(flavor)) continue;
    store.before_write();
    Stmt del(store.handle(), "DELETE FROM census WHERE flavor = ?1");
    del.bind(1, flavor).run();
  }
}

std::optional<std::string> plain_instantiation(const std::vector<const Cell*>& key_cells) {
  std::optional<std::string> found;
  for (const Cell* c : key_cells) {
    if (c->target.find(':') != std::string::npos || c->intrinsic.empty()) continue;
    if (found && *found != c->intrinsic) return std::nullopt;
    found = c->intrinsic;
  }
  return found;
}

}  // namespace archdb
