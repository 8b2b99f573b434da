// db/frontend.cpp — the front-end axis: model, committed text form, tables (see frontend.h).
#include "db/frontend.h"


#include <algorithm>
#include <set>

#include "db/file_stamps.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "schema/catalog.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"
#include "support/json_depth.h"

namespace archdb {
namespace fs = std::filesystem;

namespace {

constexpr auto kReplaceInvalid = nlohmann::json::error_handler_t::replace;
constexpr const char* kTitle =
    "# archdb front end: does clang of this flavor accept each of its amdgcn builtins (a catalog key's under the key) "
    "for each processor (README.md, \"The front-end axis\")";
constexpr const char* kCountNames[] = {"accepted", "rejected", "crashed", "not_posed", "no_builtin"};

const char* answer_name(const FrontendCell& c) { return c.accepted ? "accepted" : c.crashed ? "crashed" : "rejected"; }

bool cell_less(const FrontendCell& a, const FrontendCell& b) {
  return a.key != b.key ? a.key < b.key : a.target < b.target;
}

nlohmann::ordered_json provenance_json(const FrontendProvenance& p) {
  nlohmann::ordered_json j;
  j["schema"] = FrontendProvenance::kSchema;
  j["flavor"] = p.flavor;
  j["clang"] = p.clang;
  j["command"] = p.command;
  j["processors"] = p.processors;
  if (!p.builtin_names.empty()) j["builtin_names"] = p.builtin_names;
  nlohmann::ordered_json counts;
  for (const char* n : kCountNames) {
    auto it = p.counts.find(n);
    counts[n] = it == p.counts.end() ? 0 : it->second;
  }
  j["counts"] = counts;
  return j;
}

FrontendProvenance provenance_from(const nlohmann::ordered_json& j) {
  FrontendProvenance p;
  if (j.value("schema", "") != FrontendProvenance::kSchema)
    throw std::invalid_argument(std::string("schema must be ") + FrontendProvenance::kSchema);
  try {
    p.flavor = j.at("flavor").get<std::string>();
    p.clang = j.at("clang").get<std::string>();
    p.command = j.at("command").get<std::vector<std::string>>();
    p.processors = j.at("processors").get<std::vector<std::string>>();
    for (const auto& [name, n] : j.at("counts").items()) p.counts[name] = n.get<int>();
    if (j.contains("builtin_names"))
      for (const auto& [name, n] : j.at("builtin_names").items()) p.builtin_names[name] = n.get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed provenance: ") + e.what());
  }
  if (!is_valid_flavor(p.flavor)) throw std::invalid_argument("invalid flavor '" + p.flavor + "'");
  return p;
}

nlohmann::ordered_json detail(const FrontendCell& c) {
  nlohmann::ordered_json j;
  if (c.accepted) j["emitted"] = c.emitted;
  else j["diagnostic"] = c.diagnostic;
  return j;
}


}  // namespace

void Frontend::sort() {
  std::sort(keys.begin(), keys.end(), [](const FrontendKey& a, const FrontendKey& b) { return a.key < b.key; });
  std::sort(cells.begin(), cells.end(), cell_less);
  std::sort(provenance.processors.begin(), provenance.processors.end());
}

void Frontend::recount() {
  provenance.counts.clear();
  for (const char* n : kCountNames) provenance.counts[n] = 0;
  for (const auto& c : cells) provenance.counts[answer_name(c)]++;
  for (const auto& k : keys) {
    if (k.builtin.empty()) provenance.counts["no_builtin"]++;
    else if (k.call.empty()) provenance.counts["not_posed"]++;
  }
}

const FrontendKey* Frontend::key(const std::string& k) const {
  auto it = std::lower_bound(keys.begin(), keys.end(), k, [](const FrontendKey& a, const std::string& b) { return a.key < b; });
  return it != keys.end() && it->key == k ? &*it : nullptr;
}

const FrontendCell* Frontend::find(const std::string& key, const std::string& target) const {
  FrontendCell probe;
  probe.key = key;
  probe.target = target;
  auto it = std::lower_bound(cells.begin(), cells.end(), probe, cell_less);
  return it != cells.end() && it->key == key && it->target == target ? &*it : nullptr;
}

std::pair<const FrontendCell*, const FrontendCell*> Frontend::cells_of(const std::string& key) const {
  auto before = [](const FrontendCell& c, const std::string& k) { return c.key < k; };
  auto after = [](const std::string& k, const FrontendCell& c) { return k < c.key; };
  auto begin = std::lower_bound(cells.begin(), cells.end(), key, before);
  auto end = std::upper_bound(begin, cells.end(), key, after);
  return {cells.data() + (begin - cells.begin()), cells.data() + (end - cells.begin())};
}

std::string render_frontend(const Frontend& fe) {
  std::string out = std::string(kTitle) + "\n";
  nlohmann::ordered_json prov = provenance_json(fe.provenance);
  for (auto it = prov.begin(); it != prov.end(); ++it) {
    std::string value = it.value().is_string() ? it.value().get<std::string>()
                                               : it.value().dump(-1, ' ', false, kReplaceInvalid);
    out += "# " + it.key() + ": " + value + "\n";
  }
  std::string tail;
  size_t c = 0;
  for (const auto& k : fe.keys) {
    if (k.builtin.empty()) {
      tail += "no_builtin\t" + k.key + "\t" + k.reason + "\n";
      continue;
    }
    if (k.call.empty()) {
      tail += "not_posed\t" + k.key + "\t" + k.builtin + "\t" + k.reason + "\n";
      continue;
    }
    out += k.key + "\t" + k.builtin + "\t" + k.call;
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    std::map<std::string, size_t> index;
    while (c < fe.cells.size() && fe.cells[c].key < k.key) ++c;
    for (; c < fe.cells.size() && fe.cells[c].key == k.key; ++c) {
      const FrontendCell& cell = fe.cells[c];
      std::string id = std::string(answer_name(cell)) + "\t" +
                       detail(cell).dump(-1, ' ', false, kReplaceInvalid);
      auto [it, fresh] = index.emplace(id, groups.size());
      if (fresh) groups.push_back({id, {}});
      groups[it->second].second.push_back(cell.target);
    }
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      auto rank = [](const std::string& id) { return id.rfind("accepted", 0) == 0 ? 0 : id.rfind("rejected", 0) == 0 ? 1 : 2; };
      if (rank(a.first) != rank(b.first)) return rank(a.first) < rank(b.first);
      return a.second.front() < b.second.front();
    });
    for (const auto& [id, targets] : groups) {
      size_t tab = id.find('\t');
      std::string list;
      for (const auto& t : targets) list += (list.empty() ? "" : ",") + t;
      out += "\t" + id.substr(0, tab) + " " + list + " " + id.substr(tab + 1);
    }
    out += "\n";
  }
  return out + tail;
}

Frontend parse_frontend(const std::string& text, const std::string& label) {
  Frontend fe;
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
      if (line.rfind("# archdb front end", 0) != 0) throw fail("not an archdb front-end file (expected the title line)");
      continue;
    }
    if (in_header && line.rfind("# ", 0) == 0) {
      size_t colon = line.find(": ", 2);
      if (colon == std::string::npos) throw fail("malformed header line");
      std::string name = line.substr(2, colon - 2), value = line.substr(colon + 2);
      check_json_depth(value, label + ":" + std::to_string(lineno));
      nlohmann::ordered_json v = nlohmann::ordered_json::parse(value, nullptr, false);
      if (v.is_discarded() || name == "flavor" || name == "schema" || name == "clang") v = value;
      prov[name] = v;
      continue;
    }
    if (in_header) {
      in_header = false;
      try {
        fe.provenance = provenance_from(prov);
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
      processors.insert(fe.provenance.processors.begin(), fe.provenance.processors.end());
    }
    std::vector<std::string> f = split(line, '\t');
    FrontendKey k;
    if (f[0] == "no_builtin") {
      if (f.size() != 3 || f[2].empty()) throw fail("malformed no_builtin line");
      k.key = f[1];
      k.reason = f[2];
    } else if (f[0] == "not_posed") {
      if (f.size() != 4 || f[2].empty() || f[3].empty()) throw fail("malformed not_posed line");
      k.key = f[1];
      k.builtin = f[2];
      k.reason = f[3];
    } else {
      if (f.size() < 4) throw fail("a key line needs a key, a builtin, the call and at least one group");
      k.key = f[0];
      k.builtin = f[1];
      k.call = f[2];
      std::set<std::string> seen;
      for (size_t g = 3; g < f.size(); ++g) {
        size_t s1 = f[g].find(' ');
        size_t s2 = s1 == std::string::npos ? s1 : f[g].find(' ', s1 + 1);
        if (s2 == std::string::npos) throw fail("malformed group");
        std::string status = f[g].substr(0, s1);
        if (status != "accepted" && status != "rejected" && status != "crashed")
          throw fail("unknown front-end status '" + status + "'");
        check_json_depth(std::string_view(f[g]).substr(s2 + 1), label + ":" + std::to_string(lineno));
        nlohmann::json d = nlohmann::json::parse(f[g].substr(s2 + 1), nullptr, false);
        if (!d.is_object()) throw fail("a group's detail must be a JSON object");
        for (const auto& t : split(f[g].substr(s1 + 1, s2 - s1 - 1), ',')) {
          if (!processors.count(t)) throw fail("processor '" + t + "' is not in the header's list");
          if (!seen.insert(t).second) throw fail("processor " + t + " appears twice for " + k.key);
          FrontendCell c;
          c.key = k.key;
          c.target = t;
          c.accepted = status == "accepted";
          c.crashed = status == "crashed";
          try {
            if (c.accepted) c.emitted = d.at("emitted").get<std::vector<std::string>>();
            else c.diagnostic = d.at("diagnostic").get<std::string>();
          } catch (const nlohmann::json::exception& e) {
            throw fail(std::string("malformed group detail: ") + e.what());
          }
          if (!c.accepted && c.diagnostic.empty()) throw fail("a rejection or crash without clang's words");
          fe.cells.push_back(std::move(c));
        }
      }
      if (seen.size() != processors.size())
        throw fail(k.key + " has " + std::to_string(seen.size()) + " of " + std::to_string(processors.size()) + " processors");
    }
    if (!is_valid_key(k.key) && !names_builtin(k.key)) throw fail("invalid key '" + k.key + "' (neither a catalog key nor a builtin)");
    if (names_builtin(k.key) && k.builtin != k.key && !k.builtin.empty())
      throw fail("a builtin's row names another builtin '" + k.builtin + "'");
    for (const auto& other : fe.keys)
      if (other.key == k.key) throw fail("key " + k.key + " appears twice");
    fe.keys.push_back(std::move(k));
  }
  if (in_header) throw fail("no rows");
  FrontendProvenance stated = fe.provenance;
  for (const char* n : kCountNames) stated.counts.emplace(n, 0);  // a file from before a count was kept has none
  fe.sort();
  fe.recount();
  if (stated.counts != fe.provenance.counts) throw input_error(label + ": counts in the header disagree with the rows");
  return fe;
}

std::optional<Frontend> read_frontend_file(const fs::path& data_root, const std::string& flavor) {
  fs::path path = data_root / flavor / kFrontendFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  Frontend fe = parse_frontend(read_file(path), path.lexically_normal().string());
  if (fe.provenance.flavor != flavor)
    throw input_error(path.string() + ": names flavor '" + fe.provenance.flavor + "' but the folder is '" + flavor + "'");
  return fe;
}

void write_frontend_file(const fs::path& data_root, const Frontend& fe) {
  fs::path dir = data_root / fe.provenance.flavor;
  fs::create_directories(dir);
  write_file_atomically(dir / kFrontendFile, render_frontend(fe));
}

void store_frontend(Store& store, const Frontend& fe, const std::string& source_digest) {
  sqlite3* db = store.handle();
  store.before_write();
  Transaction tx(db);
  Stmt del(db, "DELETE FROM frontend WHERE flavor = ?1");
  del.bind(1, fe.provenance.flavor).run();
  Stmt ins(db, "INSERT INTO frontend(flavor, provenance, source_digest) VALUES (?1, ?2, ?3)");
  ins.bind(1, fe.provenance.flavor).bind(2, provenance_json(fe.provenance).dump(-1, ' ', false, kReplaceInvalid));
  ins.bind_or_null(3, source_digest).run();
  Stmt key(db, "INSERT INTO frontend_key(flavor, key, builtin, call, reason) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& k : fe.keys)
    key.bind(1, fe.provenance.flavor).bind(2, k.key).bind_or_null(3, k.builtin).bind_or_null(4, k.call).bind_or_null(5, k.reason).run();
  Stmt cell(db, "INSERT INTO frontend_cell(flavor, key, target, status, diagnostic, emitted) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (const auto& c : fe.cells) {
    cell.bind(1, fe.provenance.flavor).bind(2, c.key).bind(3, c.target).bind(4, answer_name(c));
    cell.bind_or_null(5, c.accepted ? "" : c.diagnostic);
    cell.bind_or_null(6, c.accepted ? nlohmann::json(c.emitted).dump() : "");
    cell.run();
  }
  tx.commit();
}

std::optional<Frontend> load_frontend(const Store& store, const std::string& flavor) {
  sqlite3* db = store.handle();
  Frontend fe;
  {
    Stmt q(db, "SELECT provenance FROM frontend WHERE flavor = ?1");
    q.bind(1, flavor);
    if (!q.step()) return std::nullopt;
    try {
      fe.provenance = provenance_from(stored_ordered_json(db, q.text(0)));
    } catch (const std::exception& e) {
      throw input_error(store.path().string() + ": front end of " + flavor + ": " + e.what());
    }
  }
  Stmt qk(db, "SELECT key, builtin, call, reason FROM frontend_key WHERE flavor = ?1 ORDER BY key");
  qk.bind(1, flavor);
  while (qk.step()) fe.keys.push_back({qk.text(0), qk.text(1), qk.text(2), qk.text(3)});
  Stmt qc(db, "SELECT key, target, status, diagnostic, emitted FROM frontend_cell WHERE flavor = ?1 ORDER BY key, target");
  qc.bind(1, flavor);
  while (qc.step()) {
    FrontendCell c;
    c.key = qc.text(0);
    c.target = qc.text(1);
    c.accepted = qc.text(2) == "accepted";
    c.crashed = qc.text(2) == "crashed";
    c.diagnostic = qc.text(3);
    if (!qc.is_null(4)) c.emitted = stored_string_list(db, qc.text(4));
    fe.cells.push_back(std::move(c));
  }
  return fe;
}

void sync_frontend_from_data(Store& store, const fs::path& data_root) {
  std::set<std::string> committed;
  std::error_code ec;
  if (fs::is_directory(data_root, ec)) {
    for (const auto& e : fs::directory_iterator(data_root, ec)) {
      std::string flavor = e.path().filename().string();
      if (flavor.empty() || flavor[0] == '.' || !fs::exists(e.path() / kFrontendFile, ec)) continue;
      committed.insert(flavor);
      // The digest from the file's stat stamp when it did not change: the file itself is read only if it did.
      std::string text;
      bool read = false;
      std::string digest = stamped_digest(store, "frontend:" + flavor, {e.path() / kFrontendFile}, [&] {
        text = read_file(e.path() / kFrontendFile);
        read = true;
        return digest_hex(text);
      });
      {
        Stmt q(store.handle(), "SELECT source_digest FROM frontend WHERE flavor = ?1");
        q.bind(1, flavor);
        if (q.step() && q.text(0) == digest) continue;
      }
      if (!read) {
        text = read_file(e.path() / kFrontendFile);
        digest = digest_hex(text);
      }
      Frontend fe = parse_frontend(text, (e.path() / kFrontendFile).lexically_normal().string());
      if (fe.provenance.flavor != flavor)
        throw input_error((e.path() / kFrontendFile).string() + ": names flavor '" + fe.provenance.flavor +
                          "' but the folder is '" + flavor + "'");
      store_frontend(store, fe, digest);
    }
  }
  std::vector<std::string> stored;
  {
    Stmt q(store.handle(), "SELECT flavor FROM frontend");
    while (q.step()) stored.push_back(q.text(0));
  }
  for (const auto& flavor : stored) {
    if (committed.count(flavor)) continue;
    store.before_write();
    Stmt del(store.handle(), "DELETE FROM frontend WHERE flavor = ?1");
    del.bind(1, flavor).run();
  }
}

}  // namespace archdb
