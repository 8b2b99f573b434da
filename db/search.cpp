// db/search.cpp — see search.h.
#include "db/search.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "db/census.h"
#include "db/column.h"
#include "db/history.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb {

std::string_view name_kind_name(NameKind kind) {
  switch (kind) {
    case NameKind::kKey: return "key";
    case NameKind::kIntrinsic: return "intrinsic";
    case NameKind::kBuiltin: return "builtin";
    case NameKind::kMnemonic: return "mnemonic";
  }
  return "?";
}

std::string_view name_match_name(NameMatch match) {
  switch (match) {
    case NameMatch::kExact: return "exact";
    case NameMatch::kInstantiation: return "instantiation";
    case NameMatch::kPrefix: return "prefix";
    case NameMatch::kWord: return "word";
    case NameMatch::kSubstring: return "substring";
  }
  return "?";
}

std::string normalize_name(std::string_view name) {
  std::string s;
  for (char c : name)
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"__builtin_amdgcn_", "llvm.amdgcn.", "amdgcn.", "llvm."}) {
    std::string p = prefix;
    if (s.rfind(p, 0) == 0) {
      s.erase(0, p.size());
      break;
    }
  }
  std::replace(s.begin(), s.end(), '_', '.');
  return s;
}

namespace {

// Entries by (kind, name) while building.
struct Builder {
  std::map<std::pair<NameKind, std::string>, std::pair<std::set<std::string>, std::set<std::string>>> found;
  std::map<std::string, std::set<std::string>> key_instantiations;

  void add(NameKind kind, const std::string& name, const std::string& flavor, const std::string& means = "") {
    auto& [flavors, meaning] = found[{kind, name}];
    if (!flavor.empty()) flavors.insert(flavor);
    if (!means.empty()) meaning.insert(means);
  }
};

// The intrinsic an instantiation name is of, where the census knows it; the name itself otherwise.
std::string base_of(const std::map<std::string, std::string>& instantiation_base, const std::string& name) {
  auto it = instantiation_base.find(name);
  return it == instantiation_base.end() ? name : it->second;
}

// Whether `q` is `base` with overload types after it ("wmma.f32.16x16x16.f16.v8f32.v16f16" of
// "wmma.f32.16x16x16.f16"): each further segment a type as LLVM mangles it (i32, v8f32, bf16, p3, v2p1).
bool is_instantiation_of(const std::string& q, const std::string& base) {
  if (q.size() <= base.size() || q.compare(0, base.size(), base) != 0 || q[base.size()] != '.') return false;
  static const std::regex kType("(v[0-9]+)?((i|f|bf)[0-9]+|p[0-9]+)");
  size_t at = base.size() + 1;
  while (at <= q.size()) {
    size_t dot = q.find('.', at);
    std::string segment = q.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (!std::regex_match(segment, kType)) return false;
    if (dot == std::string::npos) return true;
    at = dot + 1;
  }
  return false;
}

}  // namespace

NameIndex NameIndex::build(const Catalog& catalog, const Store& store) {
  sqlite3* db = store.handle();
  Builder b;
  std::map<std::string, std::string> instantiation_base;  // census instantiation -> its intrinsic

  // The censuses: every intrinsic of each LLVM, measured or not.
  {
    Stmt q(db, "SELECT flavor, key, intrinsic FROM census_instantiation");
    while (q.step()) {
      b.add(NameKind::kIntrinsic, q.text(2), q.text(0));
      instantiation_base[q.text(1)] = q.text(2);
    }
    Stmt n(db, "SELECT flavor, intrinsic FROM census_not_probed");
    while (n.step()) b.add(NameKind::kIntrinsic, n.text(1), n.text(0));
  }
  // Catalog keys: in the catalog or in a column (an imported one's too), with the intrinsics they pose.
  for (const auto& e : catalog.entries) {
    b.add(NameKind::kKey, e.key, "", e.spec.name);
    for (const auto& [flavor, spec] : e.per_flavor) b.add(NameKind::kKey, e.key, "", spec.name);
  }
  {
    Stmt q(db, "SELECT DISTINCT flavor, decl_key, intrinsic FROM cell");
    while (q.step()) {
      const std::string key = q.text(1), intrinsic = q.text(2);
      b.add(NameKind::kKey, key, q.text(0));
      b.key_instantiations[key].insert(intrinsic);
    }
  }
  // Which keys pose an intrinsic: by the catalog's spec (the intrinsic) and by the cells (an instantiation).
  std::map<std::string, std::set<std::string>> posed_by;
  for (const auto& [kn, v] : b.found)
    if (kn.first == NameKind::kKey)
      for (const auto& intrinsic : v.second) posed_by[intrinsic].insert(kn.second);
  for (const auto& [key, insts] : b.key_instantiations)
    for (const auto& i : insts)
      if (instantiation_base.count(i)) posed_by[instantiation_base[i]].insert(key);
  for (const auto& [intrinsic, keys] : posed_by) {
    // A catalog key's intrinsic outside every census (llvm.fmuladd) is still a name one can search for.
    std::set<std::string> key_flavors;
    for (const auto& k : keys) {
      auto f = b.found.find({NameKind::kKey, k});
      if (f != b.found.end()) key_flavors.insert(f->second.first.begin(), f->second.first.end());
    }
    for (const auto& k : keys) b.add(NameKind::kIntrinsic, intrinsic, "", k);
    for (const auto& f : key_flavors) b.add(NameKind::kIntrinsic, intrinsic, f);
  }
  // The front ends: every builtin of each clang, the key that claims it and the intrinsics it emits.
  {
    std::map<std::pair<std::string, std::string>, std::string> builtin_of;  // (flavor, front-end key) -> builtin
    Stmt q(db, "SELECT flavor, key, builtin FROM frontend_key WHERE builtin IS NOT NULL");
    while (q.step()) {
      b.add(NameKind::kBuiltin, q.text(2), q.text(0), q.text(1) != q.text(2) ? q.text(1) : "");
      builtin_of[{q.text(0), q.text(1)}] = q.text(2);
    }
    // (A join here costs three times the scan: the builtin is looked up in the map instead.)
    Stmt e(db, "SELECT DISTINCT flavor, key, emitted FROM frontend_cell WHERE status = 'accepted' AND emitted IS NOT NULL");
    while (e.step()) {
      auto builtin = builtin_of.find({e.text(0), e.text(1)});
      if (builtin == builtin_of.end()) continue;
      for (const auto& i : stored_string_list(db, e.text(2)))
        b.add(NameKind::kBuiltin, builtin->second, "", base_of(instantiation_base, i));
    }
  }
  // Mnemonics: the instructions calls lower to, beyond the waits, nops and moves around every call.
  {
    Stmt q(db, "SELECT DISTINCT flavor, decl_key, lowered_to FROM cell WHERE status = 'ok' AND lowered_to IS NOT NULL");
    while (q.step())
      for (const auto& m : stored_string_list(db, q.text(2)))
        if (!is_plumbing_mnemonic(m)) b.add(NameKind::kMnemonic, m, q.text(0), q.text(1));
    Stmt c(db, "SELECT DISTINCT flavor, key, json_extract(detail, '$.lowered_to') AS l FROM census_group "
               "WHERE status = 'ok' AND l IS NOT NULL");
    while (c.step())
      for (const auto& m : stored_string_list(db, c.text(2)))
        if (!is_plumbing_mnemonic(m)) b.add(NameKind::kMnemonic, m, c.text(0), base_of(instantiation_base, c.text(1)));
  }

  NameIndex index;
  for (auto& [kn, v] : b.found) {
    NameEntry e;
    e.kind = kn.first;
    e.name = kn.second;
    e.flavors.assign(v.first.begin(), v.first.end());
    std::sort(e.flavors.begin(), e.flavors.end(), flavor_before);
    e.means.assign(v.second.begin(), v.second.end());
    if (e.kind == NameKind::kKey) {
      auto it = b.key_instantiations.find(e.name);
      if (it != b.key_instantiations.end()) e.instantiations.assign(it->second.begin(), it->second.end());
    }
    index.normalized_.push_back(normalize_name(e.name));
    index.entries_.push_back(std::move(e));
  }
  return index;
}

namespace {

// What an index is built from, as a digest: the catalog's keys and intrinsics, and each column's, census's and front
// end's stored digest (a measured column's run and cell count too: a run stored before its files are written).
std::string index_inputs(const Catalog& catalog, sqlite3* db) {
  std::string text = "name-index/1\n";
  for (const auto& e : catalog.entries) {
    text += e.key + "\t" + e.spec.name;
    for (const auto& [flavor, spec] : e.per_flavor) text += "\t" + flavor + ":" + spec.name;
    text += "\n";
  }
  for (const char* sql : {"SELECT f.name, f.origin, ifnull(f.source_digest, ''), ifnull(f.run_id, ''), "
                          "(SELECT count(*) FROM cell c WHERE c.flavor = f.name) FROM flavor f ORDER BY f.name",
                          "SELECT flavor, ifnull(source_digest, ''), '', '', '' FROM census ORDER BY flavor",
                          "SELECT flavor, ifnull(source_digest, ''), '', '', '' FROM frontend ORDER BY flavor"}) {
    Stmt q(db, sql);
    while (q.step()) text += q.text(0) + "\t" + q.text(1) + "\t" + q.text(2) + "\t" + q.text(3) + "\t" + q.text(4) + "\n";
    text += "--\n";
  }
  return digest_hex(text);
}

// A list field of a kept entry: empty for none (split() would give one empty name).
std::vector<std::string> list_field(const std::string& text) {
  return text.empty() ? std::vector<std::string>{} : split(text, ',');
}

}  // namespace

NameIndex NameIndex::load_or_build(const Catalog& catalog, const Store& store) {
  sqlite3* db = store.handle();
  const std::string inputs = index_inputs(catalog, db);
  {
    Stmt q(db, "SELECT entries FROM name_index WHERE id = 1 AND inputs = ?");
    q.bind(1, inputs);
    if (q.step()) {
      NameIndex index;
      bool ours = true;  // every line as this archdb writes it (the text ends with a newline: one empty piece)
      const std::vector<std::string> lines = split(q.text(0), '\n');
      for (size_t i = 0; i + 1 < lines.size() && ours; ++i) {
        std::vector<std::string> f = split(lines[i], '\t');
        ours = f.size() == 5 && f[0].size() == 1 && f[0][0] >= '0' && f[0][0] <= '3';
        if (!ours) break;  // not as this archdb writes it: build it again
        NameEntry e;
        e.kind = static_cast<NameKind>(f[0][0] - '0');
        e.name = f[1];
        e.flavors = list_field(f[2]);
        e.means = list_field(f[3]);
        e.instantiations = list_field(f[4]);
        index.normalized_.push_back(normalize_name(e.name));
        index.entries_.push_back(std::move(e));
      }
      if (ours && lines.back().empty() && !index.entries_.empty()) return index;
    }
  }
  NameIndex index = build(catalog, store);
  std::string entries;
  for (const NameEntry& e : index.entries_)
    entries += std::to_string(static_cast<int>(e.kind)) + "\t" + e.name + "\t" + join(e.flavors, ",") + "\t" +
               join(e.means, ",") + "\t" + join(e.instantiations, ",") + "\n";
  try {
    Stmt put(db, "INSERT OR REPLACE INTO name_index (id, inputs, entries) VALUES (1, ?, ?)");
    put.bind(1, inputs);
    put.bind(2, entries);
    put.step();
  } catch (const Error&) {
    // A database this process cannot write (or busy past its timeout): the index is only not kept.
  }
  return index;
}

std::vector<NameHit> NameIndex::search(std::string_view text, size_t limit, size_t* total) const {
  const std::string q = normalize_name(text);
  std::vector<NameHit> hits;
  if (q.empty()) {
    if (total) *total = 0;
    return hits;
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::string& n = normalized_[i];
    std::optional<NameMatch> m;
    if (n == q) {
      m = NameMatch::kExact;
    } else if ((entries_[i].kind == NameKind::kIntrinsic || entries_[i].kind == NameKind::kKey) &&
               is_instantiation_of(q, n)) {
      m = NameMatch::kInstantiation;  // "wmma.f32.16x16x16.f16.v8f32.v16f16" of "wmma.f32.16x16x16.f16"
    } else if (n.compare(0, q.size(), q) == 0) {
      m = NameMatch::kPrefix;
    } else if (size_t at = n.find(q); at != std::string::npos) {
      bool word = false;
      for (; at != std::string::npos && !word; at = n.find(q, at + 1)) word = n[at - 1] == '.';
      m = word ? NameMatch::kWord : NameMatch::kSubstring;
    }
    if (m) hits.push_back({&entries_[i], *m});
  }
  auto rank = [](const NameHit& h) {
    return std::make_tuple(static_cast<int>(h.match), static_cast<int>(h.entry->kind), h.entry->name.size());
  };
  std::sort(hits.begin(), hits.end(), [&](const NameHit& a, const NameHit& b) {
    auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a.entry->name < b.entry->name;
  });
  if (total) *total = hits.size();
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

const NameEntry* NameIndex::exact(NameKind kind, const std::string& normalized) const {
  const NameEntry* best = nullptr;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].kind == kind && normalized_[i] == normalized &&
        (!best || entries_[i].name.size() < best->name.size()))
      best = &entries_[i];
  return best;
}

std::optional<NameResolution> NameIndex::resolve(std::string_view spelling) const {
  const std::string asked(spelling);
  for (const auto& e : entries_)
    if (e.kind == NameKind::kKey && e.name == asked) return NameResolution{NameKind::kKey, asked, ""};
  const std::string q = normalize_name(spelling);
  if (q.empty()) return std::nullopt;
  if (const NameEntry* key = exact(NameKind::kKey, q)) return NameResolution{NameKind::kKey, key->name, "catalog key " + key->name};

  // An intrinsic: the key that poses exactly it (all its cells call it by that very name), else the censuses.
  auto by_intrinsic = [&](const std::string& intrinsic, const std::string& prefix) -> NameResolution {
    for (const auto& e : entries_)
      if (e.kind == NameKind::kKey && e.instantiations == std::vector<std::string>{intrinsic})
        return {NameKind::kKey, e.name, prefix + "catalog key " + e.name + ", which poses " + intrinsic};
    return {NameKind::kIntrinsic, intrinsic, prefix.empty() ? "" : prefix + "answered by the censuses"};
  };
  if (const NameEntry* intrinsic = exact(NameKind::kIntrinsic, q)) return by_intrinsic(intrinsic->name, "");
  if (const NameEntry* builtin = exact(NameKind::kBuiltin, q)) {
    for (const auto& m : builtin->means)
      if (const NameEntry* key = exact(NameKind::kKey, normalize_name(m)); key && key->name == m)
        return NameResolution{NameKind::kKey, m, builtin->name + " is the builtin of catalog key " + m};
    for (const auto& m : builtin->means)
      if (exact(NameKind::kIntrinsic, normalize_name(m)))
        return by_intrinsic(m, "clang emits " + m + " for " + builtin->name + ": ");
  }
  // An instantiation: a key's, or one of an intrinsic the censuses know (they answer it or say it was not measured).
  // (A key whose targets pose different instantiations, wave32 and wave64 WMMA, answers none of them alone.)
  for (const auto& e : entries_)
    if (e.kind == NameKind::kKey && e.instantiations.size() == 1 && normalize_name(e.instantiations.front()) == q)
      return NameResolution{NameKind::kKey, e.name, "catalog key " + e.name + ", which poses " + e.instantiations.front()};
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::string& n = normalized_[i];
    if (entries_[i].kind == NameKind::kIntrinsic && is_instantiation_of(q, n)) {
      std::string name = asked.rfind("llvm.", 0) == 0 ? asked : full_intrinsic_name(q);
      return NameResolution{NameKind::kIntrinsic, name, ""};  // the census's answer names what it weighed
    }
  }
  return std::nullopt;
}

std::string NameIndex::command_for(const NameEntry& entry) {
  switch (entry.kind) {
    case NameKind::kKey:
    case NameKind::kIntrinsic:
    case NameKind::kBuiltin: return "archdb query " + entry.name;
    case NameKind::kMnemonic:
      return entry.means.empty() ? "archdb search " + entry.name : "archdb query " + entry.means.front();
  }
  return "";
}

std::string NameIndex::unknown_message(std::string_view name, const std::string& how_to_search) const {
  size_t total = 0;
  auto hits = search(name, 5, &total);
  const std::string asked(name);
  std::string message = "unknown name '" + asked + "': not a catalog key, intrinsic or builtin archdb knows";
  if (hits.empty()) return message;
  const NameEntry& best = *hits.front().entry;
  if (hits.front().match == NameMatch::kExact && best.kind == NameKind::kMnemonic)
    return "'" + asked + "' is an instruction, not a call: " + join(best.means, ", ") + " lower to it (ask for one of those; " +
           how_to_search + " lists them)";
  std::vector<std::string> names;
  for (const auto& h : hits) names.push_back(h.entry->name + " (" + std::string(name_kind_name(h.entry->kind)) + ")");
  return message + "; " + how_to_search + " finds " + std::to_string(total) + ": " + join(names, ", ") +
         (total > hits.size() ? ", ..." : "");
}

nlohmann::ordered_json name_hits_json(std::string_view query, const std::vector<NameHit>& hits, size_t total) {
  nlohmann::ordered_json out;
  out["query"] = std::string(query);
  out["total"] = total;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& h : hits)
    list.push_back({{"name", h.entry->name},
                    {"kind", std::string(name_kind_name(h.entry->kind))},
                    {"match", std::string(name_match_name(h.match))},
                    {"flavors", h.entry->flavors},
                    {"means", h.entry->means},
                    {"command", NameIndex::command_for(*h.entry)}});
  out["hits"] = list;
  return out;
}

}  // namespace archdb
