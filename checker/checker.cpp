// checker/checker.cpp — verdicts from measured columns. The rule: refused when anything the kernel uses is
// answered "no" on the target (name_absent, signature_mismatch, arch_absent, or another target's intrinsic:
// foreign_target); otherwise unvalidated when
// anything is not answered (no column, no cell, not in the catalog, a crash, a timeout, an unknown
// processor); cleared only when every use is answered ok.
#include "checker/checker.h"

#include "checker/ir_uses.h"
#include "db/census.h"
#include "db/sqlite.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <regex>

#include <sqlite3.h>

#include "schema/targets.h"
#include "support/error.h"
#include "support/text.h"

extern char** environ;

namespace archdb {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kCleared: return "cleared";
    case Verdict::kRefused: return "refused";
    case Verdict::kUnvalidated: return "unvalidated";
  }
  return "unvalidated";
}

namespace {

// Refused outranks unvalidated outranks cleared: one "no" decides, one unknown withholds a "yes".
int severity(Verdict v) { return v == Verdict::kRefused ? 2 : v == Verdict::kUnvalidated ? 1 : 0; }

Verdict verdict_of(const Cell& cell) {
  switch (cell.status) {
    case Status::kOk:
      // What LLVM's assembler rejects for the processor never clears a kernel (README "How the probe
      // measures"): the object codegen wrote was read, the printed assembly was not accepted.
      return cell.mc_check.empty() ? Verdict::kCleared : Verdict::kUnvalidated;
    case Status::kNameAbsent:
    case Status::kSignatureMismatch:
    case Status::kArchAbsent: return Verdict::kRefused;
    case Status::kTargetUnsupported:
    case Status::kToolchainCrash:
    case Status::kToolchainTimeout:
    case Status::kProbeError: return Verdict::kUnvalidated;
  }
  return Verdict::kUnvalidated;
}

CheckItem item_from_cell(const Cell& cell) {
  CheckItem item;
  item.intrinsic = cell.intrinsic;
  item.key = cell.key;
  item.status = std::string(status_name(cell.status));
  item.evidence = cell.evidence;
  if (cell.status == Status::kOk && !cell.mc_check.empty()) item.evidence = "MC cross-check: " + cell.mc_check;
  item.lowered_to = cell.lowered_to;
  item.posing = cell.posing;
  item.note = cell.note;
  item.source = "measured";
  item.verdict = verdict_of(cell);
  return item;
}

CheckItem no_answer(std::string intrinsic, std::string key, std::string why) {
  CheckItem item;
  item.intrinsic = std::move(intrinsic);
  item.key = std::move(key);
  item.status = "no_answer";
  item.evidence = std::move(why);
  item.source = "none";
  item.verdict = Verdict::kUnvalidated;
  return item;
}

}  // namespace

namespace {

// A read in the caller's open transaction, or in one of its own (committed at the end of the scope), so
// what is read together is seen as of one moment: a column or census replaced meanwhile is seen whole.
class ReadScope {
 public:
  explicit ReadScope(const Store& store) : db_(store.handle()), own_(sqlite3_get_autocommit(db_) != 0) {
    if (own_) sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  }
  ~ReadScope() {
    if (own_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  }
  ReadScope(const ReadScope&) = delete;
  ReadScope& operator=(const ReadScope&) = delete;

 private:
  sqlite3* db_;
  bool own_;
};

std::string column_text(sqlite3_stmt* q, int i) {
  const unsigned char* t = sqlite3_column_text(q, i);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(q, i))) : "";
}

}  // namespace

bool CensusIndex::has_intrinsic_of(std::string_view name) const {
  for (const std::string& base : intrinsic_base_candidates(std::string(name)))
    if (intrinsics.count(base) || by_name.count(base)) return true;
  return false;
}

std::optional<Cell> CensusIndex::find(std::string_view name, const std::string& target) const {
  auto it = by_name.find(name);
  auto p = std::lower_bound(processors.begin(), processors.end(), target);
  if (it == by_name.end() || p == processors.end() || *p != target) return std::nullopt;
  auto t = static_cast<uint16_t>(p - processors.begin());
  for (const Group& g : it->second)
    if (std::binary_search(g.targets.begin(), g.targets.end(), t)) {
      Cell cell = g.cell;
      cell.key = it->first;
      cell.target = target;
      if (cell.intrinsic.empty()) cell.intrinsic = it->first;
      for (size_t b = 0, e; (e = g.lowered_to.find('\n', b)) != std::string::npos; b = e + 1)
        cell.lowered_to.push_back(g.lowered_to.substr(b, e - b));
      return cell;
    }
  return std::nullopt;
}

std::shared_ptr<const CensusIndex> CensusIndex::load(const Store& store, const std::string& flavor,
                                                     std::shared_ptr<const CensusIndex> previous) {
  // The rows of census and census_group (schema/migrations/0002_census.sql), read as db/census.cpp reads
  // them, but in the caller's transaction: a snapshot reads its columns and their census as of one moment.
  ReadScope scope(store);
  sqlite3* db = store.handle();
  auto fail = [&](const std::string& what) {
    return input_error(store.path().string() + ": census of " + flavor + ": " + what);
  };
  struct Query {
    sqlite3_stmt* q = nullptr;
    ~Query() { sqlite3_finalize(q); }
  };
  Query head, rows, intrinsics;
  if (sqlite3_prepare_v2(db, "SELECT source_digest FROM census WHERE flavor = ?1", -1, &head.q, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db,
                         "SELECT intrinsic FROM census_instantiation WHERE flavor = ?1 "
                         "UNION SELECT intrinsic FROM census_not_probed WHERE flavor = ?1",
                         -1, &intrinsics.q, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT key, status, targets, detail FROM census_group WHERE flavor = ?1", -1, &rows.q,
                         nullptr) != SQLITE_OK)
    throw fail(sqlite3_errmsg(db));
  auto index = std::make_shared<CensusIndex>();
  index->flavor = flavor;
  sqlite3_bind_text(head.q, 1, flavor.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(head.q) != SQLITE_ROW) return index;  // no census
  index->source_digest = column_text(head.q, 0);
  if (previous && previous->flavor == flavor && !previous->source_digest.empty() &&
      previous->source_digest == index->source_digest)
    return previous;

  sqlite3_bind_text(intrinsics.q, 1, flavor.c_str(), -1, SQLITE_TRANSIENT);
  int step;
  while ((step = sqlite3_step(intrinsics.q)) == SQLITE_ROW) index->intrinsics.insert(column_text(intrinsics.q, 0));
  if (step != SQLITE_DONE) throw fail(sqlite3_errmsg(db));
  // Processors by name while reading; as indices into the sorted list afterwards.
  std::map<std::string, uint16_t> processor_ids;
  sqlite3_bind_text(rows.q, 1, flavor.c_str(), -1, SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(rows.q)) == SQLITE_ROW) {
    std::string key = column_text(rows.q, 0), status = column_text(rows.q, 1);
    std::vector<std::string> targets = split(column_text(rows.q, 2), ',');
    Group group;
    try {
      // A group's detail is a cell without key, target and status (and without the intrinsic where it is
      // the instantiation itself): validated as a cell.
      nlohmann::json j = nlohmann::json::parse(column_text(rows.q, 3));
      if (!j.is_object()) throw std::invalid_argument("a group's detail must be a JSON object");
      j["key"] = "census";
      j["target"] = targets.front();
      j["status"] = status;
      if (!j.contains("intrinsic")) j["intrinsic"] = key;
      if (status == "ok" && !j.contains("lowered_to")) j["lowered_to"] = nlohmann::json::array();
      group.cell = cell_from_json(j);
    } catch (const std::exception& e) {
      throw fail(key + ": " + e.what());
    }
    group.cell.key.clear();
    group.cell.target.clear();
    if (group.cell.intrinsic == key) group.cell.intrinsic.clear();  // most often: restored by find()
    for (const std::string& m : group.cell.lowered_to) group.lowered_to += m + '\n';
    group.cell.lowered_to = {};
    for (const std::string& t : targets) {
      auto [it, fresh] = processor_ids.emplace(t, static_cast<uint16_t>(processor_ids.size()));
      group.targets.push_back(it->second);
    }
    index->cells += group.targets.size();
    ++index->groups;
    index->by_name[key].push_back(std::move(group));
  }
  if (rc != SQLITE_DONE) throw fail(sqlite3_errmsg(db));
  std::vector<uint16_t> sorted_id(processor_ids.size());
  for (const auto& [name, id] : processor_ids) {
    sorted_id[id] = static_cast<uint16_t>(index->processors.size());
    index->processors.push_back(name);
  }
  for (auto& [name, groups] : index->by_name) {
    groups.shrink_to_fit();
    for (Group& g : groups) {
      for (uint16_t& t : g.targets) t = sorted_id[t];
      std::sort(g.targets.begin(), g.targets.end());
      g.targets.shrink_to_fit();
    }
  }
  return index;
}

ColumnIndex ColumnIndex::load(const Store& store, const std::string& flavor) {
  // The flavor row and its cells are read in one transaction (the caller's, if one is open), so a column
  // being replaced meanwhile is seen whole, old or new.
  ReadScope scope(store);
  ColumnIndex index;
  index.flavor = flavor;
  index.census_store = &store;
  {
    Stmt census(store.handle(), "SELECT provenance FROM census WHERE flavor = ?1");
    census.bind(1, flavor);
    if (census.step()) {
      nlohmann::json provenance = nlohmann::json::parse(census.text(0), nullptr, /*allow_exceptions=*/false);
      if (provenance.is_object() && provenance.contains("processors") && provenance["processors"].is_array())
        for (const auto& p : provenance["processors"])
          if (p.is_string()) index.census_processors.push_back(p.get<std::string>());
      std::sort(index.census_processors.begin(), index.census_processors.end());
    }
  }
  std::optional<FlavorRow> row = store.flavor(flavor);
  index.why_no_cells = "no measured column for " + flavor;
  if (row && row->origin == Origin::kDescriptor)
    index.why_no_cells = flavor + " has a descriptor but no measured cells (measure it where its toolchain is)";
  if (!row || row->origin != Origin::kMeasured) return index;  // imported columns are never evidence
  for (Cell& cell : store.cells(flavor)) {
    index.has_cells = true;
    auto& keys = index.keys_by_intrinsic[cell.intrinsic];
    if (std::find(keys.begin(), keys.end(), cell.key) == keys.end()) keys.push_back(cell.key);
    std::pair<std::string, std::string> at{cell.key, cell.target};
    index.cells.emplace(std::move(at), std::move(cell));
  }
  return index;
}

Checker::Checker(const Store& store, Catalog catalog, TargetList targets)
    : store_(store), catalog_(std::move(catalog)), targets_(std::move(targets)) {}

CheckResult Checker::check(const CheckRequest& request) const {
  if (!is_valid_flavor(request.flavor))
    throw usage_error("unknown flavor '" + request.flavor + "' (a flavor is llvm<major>, e.g. llvm22)");
  return check(request, ColumnIndex::load(store_, request.flavor));
}

CheckResult Checker::check(const CheckRequest& request, const ColumnIndex& column) const {
  if (!is_valid_flavor(request.flavor))
    throw usage_error("unknown flavor '" + request.flavor + "' (a flavor is llvm<major>, e.g. llvm22)");
  // A kernel compiled with features beyond its processor's is the question for the processor with them
  // ("gfx1100:+wavefrontsize64,-wavefrontsize32"): a wired target the columns answer, or one this build
  // measures on demand where it links the flavor's LLVM.
  if (!request.added_features.empty() && target_features(request.target).empty()) {
    CheckRequest with_features = request;
    with_features.added_features.clear();
    with_features.target = request.target + ":" + join(request.added_features, ",");
    if (targets_.contains(with_features.target) || (measurer_ && measurer_->measures(request.flavor))) {
      CheckResult result = check(with_features, column);
      result.added_features = request.added_features;
      return result;
    }
  }
  const std::string processor = target_processor(request.target);
  // Wired: every column covers it, a processor or a processor with features (schema/targets.txt).
  const bool wired = targets_.contains(request.target);
  const bool featured = !wired && processor != request.target;
  const bool processor_wired = targets_.contains(processor);
  const bool processor_in_census =
      std::binary_search(column.census_processors.begin(), column.census_processors.end(), processor);
  const bool census_only = !featured && !wired && processor_in_census;
  if (!wired && !census_only && !(featured && (processor_wired || processor_in_census))) {
    std::string known = "wired targets: " + join(targets_.names, ", ");
    if (!column.census_processors.empty())
      known += "; " + request.flavor + "'s census also has: " + join(column.census_processors, ", ");
    throw usage_error("unknown target '" + request.target + "' (" + known + ")");
  }
  for (const std::string& key : request.keys)
    if (!catalog_.find(key)) throw usage_error("unknown key '" + key + "' (not in " + catalog_.path + ")");

  CheckResult result;
  result.subject = request.subject;
  result.target = request.target;
  result.flavor = request.flavor;
  result.generic_intrinsics = request.generic_intrinsics;
  result.declared_only = request.declared_only;
  const std::string no_column =
      column.why_no_cells.empty() ? "no measured column for " + request.flavor : column.why_no_cells;

  auto answer_for_key = [&](const std::string& key, const std::string& intrinsic) {
    if (!column.has_cells) return no_answer(intrinsic, key, no_column);
    auto it = column.cells.find({key, request.target});
    if (it == column.cells.end())
      return no_answer(intrinsic, key, "no cell for " + key + " on " + request.target + " in " + request.flavor);
    CheckItem item = item_from_cell(it->second);
    if (!intrinsic.empty()) item.intrinsic = intrinsic;
    return item;
  };

  // The census cell of exactly this intrinsic name on the target, if the flavor's census has one.
  auto census_answer = [&](const std::string& intrinsic) -> std::optional<CheckItem> {
    std::optional<Cell> census;
    if (column.census) census = column.census->find(intrinsic, request.target);
    else if (column.census_store) census = census_cell(*column.census_store, request.flavor, intrinsic, request.target);
    if (!census) return std::nullopt;
    CheckItem item = item_from_cell(*census);
    item.key.clear();  // no catalog key answers: the census does
    item.source = "census";
    return item;
  };
  // Whether the flavor's LLVM has this intrinsic (nullopt: no census to say).
  auto census_knows = [&](const std::string& intrinsic) -> std::optional<bool> {
    if (intrinsic.rfind("llvm.amdgcn.", 0) != 0) return std::nullopt;
    if (column.census) {
      if (column.census->intrinsics.empty()) return std::nullopt;
      return column.census->has_intrinsic_of(intrinsic);
    }
    if (column.census_store) return census_has_intrinsic_of(*column.census_store, request.flavor, intrinsic);
    return std::nullopt;
  };
  // An instantiation of an intrinsic the census has but did not measure: a cell measured on demand earlier, or
  // now (CheckRequest::declarations gives how the kernel declares it).
  auto on_demand_answer = [&](const std::string& intrinsic) -> std::optional<CheckItem> {
    if (!column.census_store || census_knows(intrinsic) != true) return std::nullopt;
    std::optional<Cell> cell = on_demand_cell(*column.census_store, request.flavor, intrinsic, request.target);
    auto decl = request.declarations.find(intrinsic);
    if (!cell && measurer_ && measurer_->measures(request.flavor) && decl != request.declarations.end())
      cell = measurer_->measure(request.flavor, intrinsic, decl->second, request.target);
    if (!cell) return std::nullopt;
    CheckItem item = item_from_cell(*cell);
    item.key.clear();
    item.intrinsic = intrinsic;
    item.source = "on_demand";
    return item;
  };
  // The census enumerates every llvm.amdgcn.* intrinsic of the flavor's LLVM: a name it lacks is none.
  auto name_absent = [&](const std::string& intrinsic) {
    CheckItem item;
    item.intrinsic = intrinsic;
    item.status = std::string(status_name(Status::kNameAbsent));
    item.evidence = "not an intrinsic of " + request.flavor + "'s LLVM (its census lists every llvm.amdgcn.* intrinsic)";
    item.source = "census";
    item.verdict = Verdict::kRefused;
    return item;
  };
  // A target no column covers: a processor only the census has, whose every use is answered by the census cell
  // of its intrinsic (a key by the intrinsic LLVM resolved it to on the wired targets); or a processor with
  // features no column is measured with, which the census (processors without features) does not answer. Else
  // a cell measured on demand (from the kernel's declaration of it), else a non-answer saying why.
  auto unwired_answer = [&](const std::string& intrinsic, const std::string& key) {
    if (intrinsic.empty())
      return no_answer(intrinsic, key, "no measured cell of " + key + " in " + request.flavor + " names its intrinsic" +
                                           (featured ? "" : " for the census"));
    std::optional<CheckItem> item = featured ? std::nullopt : census_answer(intrinsic);
    if (!item) item = on_demand_answer(intrinsic);
    if (!item && census_knows(intrinsic) == false) item = name_absent(intrinsic);
    if (!item) {
      std::string why;
      if (!featured)
        why = request.target + " is not wired and " + request.flavor + "'s census has no cell for " + intrinsic + " on it";
      else if (request.declarations.find(intrinsic) == request.declarations.end() && !key.empty())
        why = request.target + " is measured on demand from a kernel's IR (its declaration of " + intrinsic +
              "), not from a key";
      else
        why = request.target + " (a processor with features) is measured on demand, from a kernel's IR, by an "
              "archdb that links " + request.flavor + "'s LLVM";
      return no_answer(intrinsic, key, why);
    }
    item->key = key;
    item->intrinsic = intrinsic;
    return *item;
  };
  auto resolved_intrinsic = [&](const std::string& key) -> std::string {
    auto it = column.cells.lower_bound({key, ""});
    return it != column.cells.end() && it->first.first == key ? it->second.intrinsic : "";
  };

  for (const std::string& key : request.keys)
    result.items.push_back(featured || census_only ? unwired_answer(resolved_intrinsic(key), key) : answer_for_key(key, ""));
  for (const std::string& intrinsic : request.intrinsics) {
    auto keys = column.keys_by_intrinsic.find(intrinsic);
    if (std::optional<std::string> foreign = foreign_target_of(intrinsic)) {
      // No column is needed to say no: an AMD GPU backend never lowers another target's intrinsic.
      CheckItem item;
      item.intrinsic = intrinsic;
      item.status = "foreign_target";
      item.evidence = intrinsic + " is an intrinsic of LLVM's '" + *foreign +
                      "' target, not of AMDGPU (amdgcn): no AMD GPU target lowers it";
      item.source = "llvm";
      item.verdict = Verdict::kRefused;
      result.items.push_back(std::move(item));
    } else if (featured || census_only) {
      std::string key = keys == column.keys_by_intrinsic.end() ? "" : keys->second.front();
      result.items.push_back(unwired_answer(intrinsic, key));
    } else if (!column.has_cells) {
      result.items.push_back(no_answer(intrinsic, "", no_column));
    } else if (keys == column.keys_by_intrinsic.end()) {
      if (std::optional<CheckItem> census = census_answer(intrinsic)) {
        result.items.push_back(std::move(*census));
      } else if (std::optional<CheckItem> measured = on_demand_answer(intrinsic)) {
        result.items.push_back(std::move(*measured));
      } else if (census_knows(intrinsic) == false) {
        result.items.push_back(name_absent(intrinsic));
      } else {
        std::string why = "not in the catalog: " + request.flavor + " has no measured cell for it";
        if (!target_features(request.target).empty())
          why += " on " + request.target + " (its census measures processors without features; an archdb that links " +
                 request.flavor + "'s LLVM measures it on demand)";
        result.items.push_back(no_answer(intrinsic, "", why));
      }
    } else {
      // Keys that resolve to one intrinsic pose the same function; should their answers differ, the
      // most severe one stands.
      CheckItem chosen;
      bool first = true;
      for (const std::string& key : keys->second) {
        CheckItem item = answer_for_key(key, intrinsic);
        if (first || severity(item.verdict) > severity(chosen.verdict)) chosen = std::move(item);
        first = false;
      }
      result.items.push_back(std::move(chosen));
    }
  }

  // A kernel compiled with features beyond its processor's (+wavefrontsize64 on gfx1100) poses its calls to
  // another code generator than the columns measured: wave64 forms of WMMA lower only there, and forms that
  // lower on the plain processor may not. Neither answer holds, so every use that depends on the processor is
  // a non-answer naming the features; a foreign target's intrinsic and a name this LLVM lacks stay refused.
  const std::string features = join(request.added_features, ",");
  if (!features.empty() && target_features(request.target) != features) {
    result.added_features = request.added_features;
    for (CheckItem& item : result.items) {
      if (item.source == "llvm" || item.status == status_name(Status::kNameAbsent)) continue;
      item.evidence = "the kernel is compiled with " + features + " beyond " + target_processor(request.target) +
                      "'s own features; " + request.flavor + "'s cells of " + request.target +
                      " were measured without them (there: " + item.status +
                      (item.evidence.empty() ? "" : ", " + item.evidence) + ")";
      item.status = "no_answer";
      item.verdict = Verdict::kUnvalidated;
      item.lowered_to.clear();
    }
  }

  result.verdict = Verdict::kCleared;
  for (const CheckItem& item : result.items)
    if (severity(item.verdict) > severity(result.verdict)) result.verdict = item.verdict;
  return result;
}

void CheckResult::apply_drift(std::vector<std::string> found) {
  drift_checked = true;
  drift = std::move(found);
  if (!drift.empty()) verdict = Verdict::kRefused;
}

std::string CheckResult::headline() const {
  std::string subject_text = subject.empty() ? "(keys)" : subject;
  std::string head = std::string(verdict_name(verdict)) + ": " + subject_text + " on " + target + " (" + flavor + ")";
  std::string drift_text;
  if (!drift.empty()) {
    drift_text = "manifest drift — " + drift.front();
    if (drift.size() > 1) drift_text += " (and " + std::to_string(drift.size() - 1) + " more)";
  }
  if (verdict == Verdict::kCleared) {
    return head + ": " + std::to_string(items.size()) + (items.size() == 1 ? " intrinsic" : " intrinsics") +
           ", all ok";
  }
  std::vector<const CheckItem*> deciding;
  for (const CheckItem& item : items)
    if (item.verdict == verdict) deciding.push_back(&item);
  if (deciding.empty()) return head + ": " + drift_text;  // refused by the drift alone
  const CheckItem& first = *deciding.front();
  std::string name = first.key.empty() ? first.intrinsic : first.key;
  std::string line = head + ": " + name + " is " + first.status;
  if (!first.evidence.empty()) line += " — " + first.evidence;
  if (deciding.size() > 1) line += " (and " + std::to_string(deciding.size() - 1) + " more)";
  if (!drift_text.empty()) line += "; " + drift_text;
  return line;
}

nlohmann::ordered_json CheckResult::to_json() const {
  nlohmann::ordered_json j;
  j["subject"] = subject;
  j["target"] = target;
  j["flavor"] = flavor;
  j["verdict"] = std::string(verdict_name(verdict));
  j["message"] = headline();
  j["items"] = nlohmann::ordered_json::array();
  for (const CheckItem& item : items) {
    nlohmann::ordered_json i;
    i["intrinsic"] = item.intrinsic;
    i["key"] = item.key;
    i["status"] = item.status;
    i["verdict"] = std::string(verdict_name(item.verdict));
    i["source"] = item.source;
    if (!item.evidence.empty()) i["evidence"] = item.evidence;
    if (!item.lowered_to.empty()) i["lowered_to"] = item.lowered_to;
    if (!item.posing.empty()) i["posing"] = item.posing;
    if (!item.note.empty()) i["note"] = item.note;
    j["items"].push_back(std::move(i));
  }
  j["generic_intrinsics"] = generic_intrinsics;
  j["declared_only"] = declared_only;
  if (!added_features.empty()) j["added_features"] = added_features;
  if (drift_checked) j["drift"] = drift;
  return j;
}

std::vector<std::string> manifest_drift(const std::vector<std::string>& ir_intrinsics,
                                        const std::vector<std::string>& manifest_keys, const ColumnIndex& column,
                                        const Catalog& catalog) {
  std::vector<std::string> drift;
  for (const std::string& intrinsic : ir_intrinsics) {
    std::vector<std::string> keys;
    if (auto it = column.keys_by_intrinsic.find(intrinsic); it != column.keys_by_intrinsic.end()) keys = it->second;
    for (const CatalogEntry& entry : catalog.entries)
      if (entry.spec.kind == DeclSpec::Kind::kIntrinsic && !entry.spec.overloaded && entry.spec.name == intrinsic &&
          std::find(keys.begin(), keys.end(), entry.key) == keys.end())
        keys.push_back(entry.key);
    bool listed = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
      return std::find(manifest_keys.begin(), manifest_keys.end(), k) != manifest_keys.end();
    });
    if (listed) continue;
    drift.push_back(keys.empty() ? intrinsic + " is used but is in no catalog key"
                                 : intrinsic + " is used but its key " + join(keys, " or ") + " is not in the manifest");
  }
  return drift;
}

std::optional<std::string> flavor_from_version_text(const std::string& text) {
  static const std::regex version(R"((?:clang|LLVM) version (\d+)\.)");
  std::smatch m;
  if (!std::regex_search(text, m, version)) return std::nullopt;
  return "llvm" + m[1].str();
}

std::string flavor_of_compiler(const std::string& compiler) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw internal_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::string version_flag = "--version";
  char* argv[] = {const_cast<char*>(compiler.c_str()), version_flag.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, compiler.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    throw usage_error("cannot run compiler '" + compiler + "': " + std::strerror(rc));
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw usage_error("compiler '" + compiler + "' --version failed");
  std::optional<std::string> flavor = flavor_from_version_text(out);
  if (!flavor) throw usage_error("compiler '" + compiler + "' --version names no clang or LLVM version");
  return *flavor;
}

}  // namespace archdb
