// checker/checker.cpp — verdicts from measured columns. The rule: refused when anything the kernel uses is
// answered "no" on the target (name_absent, signature_mismatch, arch_absent, or another target's intrinsic:
// foreign_target); otherwise unvalidated when
// anything is not answered (no column, no cell, not in the catalog, a crash, a timeout, an unknown
// processor); cleared only when every use is answered ok.
#include "checker/checker.h"

#include "checker/ir_uses.h"
#include "db/census.h"
#include "db/sqlite.h"

#include <algorithm>

#include <sqlite3.h>

#include "schema/targets.h"
#include "support/error.h"
#include "support/text.h"

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
      // What LLVM's assembler rejects for the processor never clears a kernel (docs/measuring.md "How the probe
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
  item.posed = cell.posed;
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
                         "SELECT intrinsic, key FROM census_instantiation WHERE flavor = ?1 "
                         "UNION ALL SELECT intrinsic, NULL FROM census_not_probed WHERE flavor = ?1 ORDER BY 1, 2",
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
  while ((step = sqlite3_step(intrinsics.q)) == SQLITE_ROW) {
    index->intrinsics.insert(column_text(intrinsics.q, 0));
    if (sqlite3_column_type(intrinsics.q, 1) != SQLITE_NULL)
      index->instantiations_of[column_text(intrinsics.q, 0)].push_back(column_text(intrinsics.q, 1));
  }
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
  if (std::optional<Frontend> frontend = load_frontend(store, flavor))
    index.frontend = std::make_shared<const Frontend>(std::move(*frontend));
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

namespace {

// ---- answering one use: an ordered list of sources, each a small function (Checker::check) ----

// One thing to answer: a catalog key, an intrinsic name asked, or a kernel's call (with how it poses it).
struct Use {
  std::string key;                  // a catalog key (--keys, a manifest), else empty
  std::string intrinsic;            // the intrinsic called (a key's: the one LLVM resolved it to; may be empty)
  std::optional<CallPosing> call;   // a kernel's call as it poses it; nullopt: any fair posing
  bool from_ir = false;             // the kernel's IR calls it (then its declaration may be measured)
  bool through_frontend = false;    // called through clang (a HIP kernel's key, a builtin named): clang asked first
};

// What every source of one check may consult.
struct Scope {
  const CheckRequest& request;
  const ColumnIndex& column;
  const Store* store;               // for cells looked up on demand (the command line); null in the service
  OnDemandMeasurer* measurer;
  bool featured = false;            // a processor with features no column is measured with
  bool census_only = false;         // a processor only the census covers
};

// What the sources learnt of one use as they went: a measured cell that exists but answers another posing.
struct Asked {
  std::optional<CheckItem> posed_otherwise;
  std::string difference;
};

using Source = std::optional<CheckItem> (*)(const Use&, const Scope&, Asked&);

// Another target's intrinsic: no column is needed to say no.
std::optional<CheckItem> foreign_target(const Use& use, const Scope&, Asked&) {
  std::optional<std::string> foreign = use.key.empty() ? foreign_target_of(use.intrinsic) : std::nullopt;
  if (!foreign) return std::nullopt;
  CheckItem item;
  item.intrinsic = use.intrinsic;
  item.status = "foreign_target";
  item.evidence = use.intrinsic + " is an intrinsic of LLVM's '" + *foreign +
                  "' target, not of AMDGPU (amdgcn): no AMD GPU target lowers it";
  item.source = "llvm";
  item.verdict = Verdict::kRefused;
  return item;
}

// Clang's refusal of the builtin the call goes through, from the front-end axis: the back end is never reached. A
// processor with features is asked as its processor, unless clang's words are about the wave size (the features).
std::optional<CheckItem> frontend_refusal(const Use& use, const Scope& s, Asked&) {
  if (!use.through_frontend || use.key.empty() || !s.column.frontend) return std::nullopt;
  const Frontend& frontend = *s.column.frontend;
  const FrontendKey* builtin = frontend.key(use.key);
  if (!builtin || builtin->builtin.empty()) return std::nullopt;  // no builtin: called some other way
  const std::string processor = target_processor(s.request.target);
  const FrontendCell* cell = frontend.find(use.key, processor);
  if (!cell || cell->accepted || cell->crashed) return std::nullopt;
  // The refusal holds for the key's call only where the builtin makes that call: where clang accepts it, it emits
  // the key's instantiation (ballot.i64's call is __builtin_amdgcn_ballot_w64's, not _w32's).
  std::string instantiation;
  for (auto it = s.column.cells.lower_bound({use.key, ""}); it != s.column.cells.end() && it->first.first == use.key; ++it)
    if (!it->second.intrinsic.empty()) instantiation = it->second.intrinsic;
  bool makes_the_call = false;
  for (auto [it, end] = frontend.cells_of(use.key); it != end; ++it)
    if (it->accepted && std::find(it->emitted.begin(), it->emitted.end(), instantiation) != it->emitted.end())
      makes_the_call = true;
  if (!makes_the_call) return std::nullopt;
  if (s.featured && cell->diagnostic.find("wavefrontsize") != std::string::npos) return std::nullopt;
  CheckItem item;
  item.intrinsic = builtin->builtin;
  item.key = use.key;
  item.status = std::string(status_name(Status::kArchAbsent));
  item.evidence = s.request.flavor + "'s clang refuses " + builtin->builtin + " for " + processor + ": " +
                  cell->diagnostic + " (the front-end axis)";
  item.source = "frontend";
  item.verdict = Verdict::kRefused;
  return item;
}

// A cell found for the use: it answers when it was posed as the call (posing_difference); else it is kept, and the
// next sources look for one that was (on demand).
std::optional<CheckItem> answer_or_keep(CheckItem item, const Cell& cell, const Use& use, Asked& asked) {
  item.call = use.call;
  if (!use.call) return item;
  std::optional<std::string> difference = posing_difference(cell, *use.call);
  if (!difference) return item;
  if (!asked.posed_otherwise) {
    asked.posed_otherwise = std::move(item);
    asked.difference = *difference;
  }
  return std::nullopt;
}

// The wired target's catalog cells: the key's, or those of the keys that resolve to the intrinsic (should they
// differ, the most severe of those posed as the call).
std::optional<CheckItem> catalog_cell(const Use& use, const Scope& s, Asked& asked) {
  if (s.featured || s.census_only) return std::nullopt;
  const ColumnIndex& column = s.column;
  if (!column.has_cells) {
    CheckItem item = no_answer(use.intrinsic, use.key,
                               column.why_no_cells.empty() ? "no measured column for " + s.request.flavor : column.why_no_cells);
    item.call = use.call;
    return item;
  }
  std::vector<std::string> keys;
  if (!use.key.empty()) {
    keys = {use.key};
  } else if (auto it = column.keys_by_intrinsic.find(use.intrinsic); it != column.keys_by_intrinsic.end()) {
    keys = it->second;
  }
  if (keys.empty()) return std::nullopt;
  std::optional<CheckItem> chosen;
  for (const std::string& key : keys) {
    auto it = column.cells.find({key, s.request.target});
    if (it == column.cells.end()) {
      if (!use.key.empty())
        return no_answer(use.intrinsic, key, "no cell for " + key + " on " + s.request.target + " in " + s.request.flavor);
      continue;
    }
    // A key found by the call's intrinsic answers it only where the key poses that instantiation (a key with a
    // wave64 layout poses another on wave64 targets).
    if (use.key.empty() && it->second.intrinsic != use.intrinsic) continue;
    CheckItem item = item_from_cell(it->second);
    if (!use.intrinsic.empty()) item.intrinsic = use.intrinsic;
    std::optional<CheckItem> answered = answer_or_keep(std::move(item), it->second, use, asked);
    if (answered && (!chosen || severity(answered->verdict) > severity(chosen->verdict))) chosen = std::move(answered);
  }
  return chosen;
}

// The census cell of exactly this instantiation on the target (a processor: the census has no features).
std::optional<CheckItem> census_cell_source(const Use& use, const Scope& s, Asked& asked) {
  if (s.featured || use.intrinsic.empty()) return std::nullopt;
  std::optional<Cell> census;
  if (s.column.census) census = s.column.census->find(use.intrinsic, s.request.target);
  else if (s.store) census = census_cell(*s.store, s.request.flavor, use.intrinsic, s.request.target);
  if (!census) return std::nullopt;
  CheckItem item = item_from_cell(*census);
  item.key = use.key;
  item.intrinsic = use.intrinsic;
  item.source = "census";
  return answer_or_keep(std::move(item), *census, use, asked);
}

// An intrinsic named without its overload types (`check --keys llvm.amdgcn.swmmac.f16.16x16x32.f16`): every
// instantiation the census measured of it, weighed (intrinsic_answer), the answer naming the one that decided it.
std::optional<CheckItem> census_intrinsic_source(const Use& use, const Scope& s, Asked&) {
  if (s.featured || use.intrinsic.empty() || use.call || use.from_ir) return std::nullopt;
  std::vector<CensusInstantiation> instantiations;
  std::vector<Cell> cells;
  if (s.column.census) {
    auto of = s.column.census->instantiations_of.find(use.intrinsic);
    if (of != s.column.census->instantiations_of.end())
      for (const std::string& key : of->second) {
        instantiations.push_back({key, use.intrinsic, {}});
        if (std::optional<Cell> c = s.column.census->find(key, s.request.target)) cells.push_back(*c);
      }
  } else if (s.store) {
    CensusMatch m = find_census(*s.store, s.request.flavor, use.intrinsic);
    for (const CensusInstantiation& inst : m.instantiations)
      if (inst.intrinsic == use.intrinsic) instantiations.push_back(inst);
    cells = std::move(m.cells);
  }
  std::optional<Cell> cell = instantiations.empty() ? std::nullopt : intrinsic_answer(instantiations, cells, s.request.target);
  if (!cell) return std::nullopt;
  CheckItem item = item_from_cell(*cell);
  item.key = use.key;
  item.intrinsic = cell->key;
  item.source = "census";
  return item;
}

// Whether the flavor's LLVM has this intrinsic (nullopt: no census to say).
std::optional<bool> census_knows(const Scope& s, const std::string& intrinsic) {
  if (intrinsic.rfind("llvm.amdgcn.", 0) != 0) return std::nullopt;
  if (s.column.census) {
    if (s.column.census->intrinsics.empty()) return std::nullopt;
    return s.column.census->has_intrinsic_of(intrinsic);
  }
  if (s.store) return census_has_intrinsic_of(*s.store, s.request.flavor, intrinsic);
  return std::nullopt;
}

// A cell measured on demand for this call (or, without one, the census's way): stored by an earlier check, or
// measured now where this build links the flavor's LLVM, from the kernel's declaration of the intrinsic.
std::optional<CheckItem> on_demand(const Use& use, const Scope& s, Asked&) {
  if (use.intrinsic.empty() || census_knows(s, use.intrinsic) != true) return std::nullopt;
  std::optional<Cell> cell;
  if (s.column.on_demand) {
    if (const Cell* c = s.column.on_demand->find(use.intrinsic, s.request.target, use.call)) cell = *c;
  } else if (s.store) {
    cell = on_demand_cell(*s.store, s.request.flavor, use.intrinsic, s.request.target, use.call);
  }
  auto decl = s.request.declarations.find(use.intrinsic);
  if (!cell && s.measurer && s.measurer->measures(s.request.flavor) && decl != s.request.declarations.end())
    cell = s.measurer->measure(s.request.flavor, use.intrinsic, decl->second, s.request.target, use.call);
  if (!cell) return std::nullopt;
  CheckItem item = item_from_cell(*cell);
  item.key = use.key;
  item.intrinsic = use.intrinsic;
  item.call = use.call;
  item.source = "on_demand";
  return item;
}

// A cell answers another posing than the call's, and nothing measured the call: no answer, saying so.
std::optional<CheckItem> posed_otherwise(const Use& use, const Scope& s, Asked& asked) {
  if (!asked.posed_otherwise) return std::nullopt;
  const CheckItem& cell = *asked.posed_otherwise;
  std::string there = cell.status + (cell.lowered_to.empty() ? "" : ", " + join(cell.lowered_to, " ")) +
                      (cell.evidence.empty() ? "" : ", " + cell.evidence);
  CheckItem item = no_answer(use.intrinsic, cell.key,
                             asked.difference + " (the " + cell.source + " cell: " + there + "); the call itself is " +
                                 "measured on demand by an archdb that links " + s.request.flavor + "'s LLVM");
  item.call = use.call;
  item.posed = cell.posed;
  return item;
}

// The census enumerates every llvm.amdgcn.* intrinsic of the flavor's LLVM: a name it lacks is none.
std::optional<CheckItem> name_absent(const Use& use, const Scope& s, Asked&) {
  if (use.intrinsic.empty() || census_knows(s, use.intrinsic) != false) return std::nullopt;
  CheckItem item;
  item.intrinsic = use.intrinsic;
  item.key = use.key;
  item.status = std::string(status_name(Status::kNameAbsent));
  item.evidence = "not an intrinsic of " + s.request.flavor + "'s LLVM (its census lists every llvm.amdgcn.* intrinsic)";
  item.source = "census";
  item.verdict = Verdict::kRefused;
  return item;
}

// Nothing answers: why.
std::optional<CheckItem> nothing(const Use& use, const Scope& s, Asked&) {
  const std::string& t = s.request.target;
  const std::string& f = s.request.flavor;
  std::string why;
  if (use.intrinsic.empty())
    why = "no measured cell of " + use.key + " in " + f + " names its intrinsic" + (s.featured ? "" : " for the census");
  else if (s.census_only)
    why = t + " is not wired and " + f + "'s census has no cell for " + use.intrinsic + " on it";
  else if (s.featured && !use.from_ir && !use.key.empty())
    why = t + " is measured on demand from a kernel's IR (its declaration of " + use.intrinsic + "), not from a key";
  else if (s.featured)
    why = t + " (a processor with features) is measured on demand, from a kernel's IR, by an archdb that links " + f +
          "'s LLVM";
  else if (!target_features(t).empty())
    why = "not in the catalog: " + f + " has no measured cell for it on " + t + " (its census measures processors "
          "without features; an archdb that links " + f + "'s LLVM measures it on demand)";
  else
    why = "not in the catalog: " + f + " has no measured cell for it";
  CheckItem item = no_answer(use.intrinsic, use.key, why);
  item.call = use.call;
  return item;
}

// In order: the first source that answers decides.
constexpr Source kSources[] = {foreign_target,   frontend_refusal, catalog_cell, census_cell_source, census_intrinsic_source,
                               on_demand,        posed_otherwise,  name_absent,  nothing};

// A builtin no catalog key claims, from its own row of the front-end axis: clang's refusal or crash on the processor,
// else each llvm.amdgcn.* call clang makes of it there, answered as that call. `answer` answers one use.
template <typename Answer>
std::vector<CheckItem> builtin_row_items(const FrontendKey& row, const Scope& s, const Answer& answer) {
  const std::string processor = target_processor(s.request.target);
  const FrontendCell* cell = s.column.frontend->find(row.key, processor);
  auto item_of = [&](std::string status, std::string evidence, Verdict verdict) {
    CheckItem item;
    item.intrinsic = row.builtin;
    item.status = std::move(status);
    item.evidence = std::move(evidence);
    item.source = "frontend";
    item.verdict = verdict;
    return std::vector<CheckItem>{item};
  };
  if (row.call.empty())
    return {no_answer(row.builtin, "", s.request.flavor + "'s clang has " + row.builtin + ", but it could not be posed: " + row.reason)};
  if (!cell)
    return {no_answer(row.builtin, "", processor + " is not among the processors " + s.request.flavor +
                                           "'s front-end axis asked clang about")};
  if (s.featured)
    return {no_answer(row.builtin, "", "the front-end axis asks clang for " + processor + " without " +
                                           target_features(s.request.target) + "; compile the kernel itself "
                                           "(archdb check KERNEL.hip --target " + s.request.target + ")")};
  if (cell->crashed)
    return item_of(std::string(status_name(Status::kToolchainCrash)),
                   s.request.flavor + "'s clang fails on " + row.call + " for " + processor + ": " + cell->diagnostic +
                       " (the front-end axis)",
                   Verdict::kUnvalidated);
  if (!cell->accepted)
    return item_of(std::string(status_name(Status::kArchAbsent)),
                   s.request.flavor + "'s clang refuses " + row.builtin + " for " + processor + ": " + cell->diagnostic +
                       " (the front-end axis)",
                   Verdict::kRefused);
  std::vector<CheckItem> items;
  for (const std::string& call : cell->emitted) {
    if (!names_intrinsic(call)) continue;
    Use use;
    use.intrinsic = call;
    CheckItem item = answer(use);
    item.evidence = s.request.flavor + "'s clang makes " + row.builtin + " the call " + call + " on " + processor +
                    (item.evidence.empty() ? "" : "; " + item.evidence);
    items.push_back(std::move(item));
  }
  if (items.empty())
    return {no_answer(row.builtin, "", s.request.flavor + "'s clang accepts " + row.builtin + " for " + processor +
                                           " and makes no llvm.amdgcn.* call of it (" +
                                           (cell->emitted.empty() ? std::string("no intrinsic call") : join(cell->emitted, ", ")) +
                                           "): archdb measures what the back end does with intrinsics")};
  return items;
}

}  // namespace

std::optional<std::string> posing_difference(const Cell& cell, const CallPosing& call) {
  switch (cell.status) {
    case Status::kNameAbsent:
    case Status::kSignatureMismatch:
    case Status::kArchAbsent: return std::nullopt;  // every fair way of posing the call was refused
    case Status::kOk:
    case Status::kTargetUnsupported:
    case Status::kToolchainCrash:
    case Status::kToolchainTimeout:
    case Status::kProbeError: break;
  }
  if (!cell.posed) return std::nullopt;  // nothing of the call to pose
  const CallPosing& posed = *cell.posed;
  const bool lowered = cell.status == Status::kOk;
  if (posed.imm != call.imm && !(posed.imm.empty() || call.imm.empty())) {
    std::string values;
    for (size_t i = 0; i < call.imm.size(); ++i) values += (i ? ", " : "") + std::to_string(call.imm[i]);
    return "the cell was posed with " + CallPosing{posed.imm, {}, {}}.describe() + "; this call passes " + values;
  }
  if (posed.uniform && call.uniform && *posed.uniform != *call.uniform && !(lowered && !*posed.uniform))
    return std::string("the cell holds for ") + (*posed.uniform ? "uniform" : "divergent") + " operands; this call's are " +
           (*call.uniform ? "uniform" : "divergent");
  if (posed.result_used && call.result_used && *posed.result_used != *call.result_used && !(lowered && *posed.result_used))
    return std::string("the cell holds for the result ") + (*posed.result_used ? "used" : "unused") + "; this call " +
           (*call.result_used ? "uses it" : "leaves it unused");
  return std::nullopt;
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
    if (!catalog_.find(key) && !names_uncatalogued(key))
      throw usage_error("unknown key '" + key + "' (neither in " + catalog_.path + " nor " + std::string(kUncataloguedNames) + ")");

  CheckResult result;
  result.subject = request.subject;
  result.target = request.target;
  result.flavor = request.flavor;
  result.generic_intrinsics = request.generic_intrinsics;
  result.declared_only = request.declared_only;
  result.notes = request.notes;

  Scope scope{request, column, column.census_store, measurer_, featured, census_only};
  auto answer = [&](const Use& use) {
    Asked asked;
    for (Source source : kSources)
      if (std::optional<CheckItem> item = source(use, scope, asked)) return *item;
    return CheckItem{};  // not reached: the last source always answers
  };
  // A key is answered by its cells, or where no column covers the target, by the intrinsic LLVM resolved it to.
  auto resolved_intrinsic = [&](const std::string& key) -> std::string {
    auto it = column.cells.lower_bound({key, ""});
    return it != column.cells.end() && it->first.first == key ? it->second.intrinsic : "";
  };
  for (const std::string& key : request.keys) {
    Use use;
    use.through_frontend = request.through_frontend;
    if (names_builtin(key)) {
      // A builtin is the catalog key whose builtin it is in the front-end axis: clang's answer, then the key's cells;
      // a builtin no key claims is its own row: clang's answer, then the calls clang makes of it.
      const FrontendKey* owner = nullptr;
      if (column.frontend)
        for (const FrontendKey& k : column.frontend->keys)
          if (k.builtin == key) owner = &k;
      if (!owner) {
        result.items.push_back(no_answer(key, "", column.frontend
            ? key + " is not a builtin of " + request.flavor + "'s clang (the front-end axis asks it about every "
                    "__builtin_amdgcn_* name in its files)"
            : request.flavor + " has no front-end axis (archdb frontend --flavor " + request.flavor + ")"));
        continue;
      }
      if (owner->key == key) {
        for (CheckItem& item : builtin_row_items(*owner, scope, answer)) result.items.push_back(std::move(item));
        continue;
      }
      use.key = owner->key;
      use.through_frontend = true;
      if (featured || census_only) use.intrinsic = resolved_intrinsic(owner->key);
    } else if (!catalog_.find(key)) {
      use.intrinsic = key;  // an intrinsic named where a key goes: the census's, or measured on demand
    } else {
      use.key = key;
      if (featured || census_only) use.intrinsic = resolved_intrinsic(key);
    }
    result.items.push_back(answer(use));
  }
  for (const BuiltinRefusal& refusal : request.refused_builtins) {
    CheckItem item;
    item.intrinsic = refusal.builtin;
    if (column.frontend)
      for (const FrontendKey& k : column.frontend->keys)
        if (k.builtin == refusal.builtin && k.key != k.builtin) item.key = k.key;
    item.status = std::string(status_name(refusal.unknown ? Status::kNameAbsent : Status::kArchAbsent));
    item.evidence = "clang refuses it compiling the kernel for " + request.target + ": " + refusal.diagnostic;
    item.source = "frontend";
    item.verdict = Verdict::kRefused;
    result.items.push_back(std::move(item));
  }
  for (const std::string& intrinsic : request.intrinsics) {
    Use use;
    use.intrinsic = intrinsic;
    use.from_ir = request.declarations.count(intrinsic) > 0;
    result.items.push_back(answer(use));
  }
  for (const IrCall& call : request.calls) {
    Use use;
    use.intrinsic = call.intrinsic;
    use.call = call.posed;
    use.from_ir = true;
    result.items.push_back(answer(use));
  }

  // A kernel compiled with features beyond its processor's (+wavefrontsize64 on gfx1100) poses its calls to
  // another code generator than the columns measured: wave64 forms of WMMA lower only there, and forms that
  // lower on the plain processor may not. Neither answer holds, so every use that depends on the processor is
  // a non-answer naming the features; a foreign target's intrinsic and a name this LLVM lacks stay refused.
  const std::string features = join(request.added_features, ",");
  if (!features.empty() && target_features(request.target) != features) {
    result.added_features = request.added_features;
    for (CheckItem& item : result.items) {
      if (item.source == "llvm" || item.source == "frontend" || item.status == status_name(Status::kNameAbsent)) continue;
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

void add_ir_uses(CheckRequest& request, const IrUses& uses) {
  request.calls = uses.calls;
  std::set<std::string> called;
  for (const IrCall& c : uses.calls) called.insert(c.intrinsic);
  for (const std::string& intrinsic : uses.target_intrinsics)
    if (!called.count(intrinsic)) request.intrinsics.push_back(intrinsic);
  request.generic_intrinsics = uses.generic_intrinsics;
  request.declared_only = uses.declared_only;
  request.declarations = uses.declarations;
  request.added_features = uses.added_features;
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
    if (item.call) i["call"] = posing_to_json(*item.call);
    if (item.posed) i["posed"] = posing_to_json(*item.posed);
    if (!item.note.empty()) i["note"] = item.note;
    j["items"].push_back(std::move(i));
  }
  j["generic_intrinsics"] = generic_intrinsics;
  j["declared_only"] = declared_only;
  if (!added_features.empty()) j["added_features"] = added_features;
  if (!notes.empty()) j["notes"] = notes;
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
    keys.push_back(intrinsic);  // a manifest may name the intrinsic itself
    bool listed = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
      return std::find(manifest_keys.begin(), manifest_keys.end(), k) != manifest_keys.end();
    });
    keys.pop_back();
    if (listed) continue;
    drift.push_back(keys.empty() ? intrinsic + " is used but is in no catalog key"
                                 : intrinsic + " is used but its key " + join(keys, " or ") + " is not in the manifest");
  }
  return drift;
}

}  // namespace archdb
