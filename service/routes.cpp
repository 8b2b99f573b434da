// service/routes.cpp — the /v1 API and the static page (see routes.h). Handlers read one snapshot
// each, so everything a response says comes from the same whole columns.
#include "service/routes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "checker/ir_uses.h"
#include "service/params.h"
#include "service/render.h"
#include "db/history.h"
#include "llvm/toolchain.h"
#include "support/cpus.h"
#include "support/compiler_flavor.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"
#include "support/json_depth.h"

namespace archdb::service {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains_ci(const std::string& haystack, const std::string& needle_lower) {
  return needle_lower.empty() || lower(haystack).find(needle_lower) != std::string::npos;
}

Reply json_reply(const json& j, const std::shared_ptr<const Snapshot>& snap = nullptr) {
  Reply r;
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (snap) r.etag = snap->etag;
  return r;
}

const FlavorData& need_flavor(const Snapshot& snap, const std::string& name) {
  if (const FlavorData* f = snap.flavor(name)) return *f;
  fail(404, "unknown flavor '" + name + "' (the database has: " + join(snap.flavor_names(), ", ") + ")");
}

std::string no_cells_reason(const FlavorData& f) {
  if (f.row.origin == Origin::kDescriptor)
    return f.row.name + " is a descriptor: not measured on this host (see data/" + f.row.name + "/column.json)";
  return f.row.name + " has no cells";
}

// Targets selected by `targets` and `family` among those a column (or columns) hold.
std::vector<std::string> select_targets(const std::vector<std::string>& available, const Params& p,
                                        const std::string& whose) {
  std::vector<std::string> wanted = p.targets("targets"), families = p.list("family");
  for (const auto& t : wanted)
    if (std::find(available.begin(), available.end(), t) == available.end())
      fail(400, "unknown target '" + t + "' for " + whose + " (its targets: " + join(available, ", ") + ")");
  std::set<std::string> known_families;
  for (const auto& t : available) known_families.insert(target_family(t));
  for (const auto& f : families)
    if (!known_families.count(f))
      fail(400, "unknown target family '" + f + "' for " + whose + " (its families: " +
                    join(std::vector<std::string>(known_families.begin(), known_families.end()), ", ") + ")");
  std::vector<std::string> out;
  for (const auto& t : (wanted.empty() ? available : wanted)) {
    if (!families.empty() && std::find(families.begin(), families.end(), target_family(t)) == families.end()) continue;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

std::set<Status> parse_statuses(const std::vector<std::string>& names) {
  std::set<Status> out;
  for (const auto& n : names) {
    auto s = parse_status(n);
    if (!s || *s == Status::kProbeError) {
      std::vector<std::string> valid;
      for (Status v : storable_statuses()) valid.emplace_back(status_name(v));
      fail(400, "unknown status '" + n + "' (statuses: " + join(valid, ", ") + ")");
    }
    out.insert(*s);
  }
  return out;
}

json families_json(const std::vector<std::string>& targets) {
  json out = json::array();
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> members;
  for (const auto& t : targets) {
    std::string f = target_family(t);
    if (!members.count(f)) order.push_back(f);
    members[f].push_back(t);
  }
  for (const auto& f : order) out.push_back({{"name", f}, {"targets", members[f]}});
  return out;
}

// `why`, when given, says where the key was looked for ("not in the catalog").
std::string unknown_key_message(const Schema& schema, const std::string& key, const std::string& why = "") {
  if (schema.catalog.find(key)) return "key '" + key + "' has no cells in the database yet (run `archdb regen`)";
  std::vector<std::string> near;
  for (const auto& k : schema.catalog.keys())
    if (k.find(key) != std::string::npos && near.size() < 10) near.push_back(k);
  std::vector<std::string> notes;
  if (!why.empty()) notes.push_back(why);
  if (!near.empty()) notes.push_back("did you mean: " + join(near, ", "));
  return "unknown key '" + key + "'" + (notes.empty() ? "" : " (" + join(notes, "; ") + ")");
}

// Media type without parameters, lower case.
std::string media_type(const std::string& content_type) {
  std::string t = lower(content_type.substr(0, content_type.find(';')));
  size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

std::string content_type_for(const std::string& name) {
  auto ends = [&](const char* ext) {
    std::string e = ext;
    return name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

struct CheckInput {
  std::string flavor, subject;
  std::vector<std::string> targets, keys, intrinsics;
  std::optional<std::string> ir;
};

std::vector<std::string> string_array(const nlohmann::json& v, const std::string& field) {
  if (!v.is_array()) fail(400, "field '" + field + "' must be an array of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) fail(400, "field '" + field + "' must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

Api::Api(SnapshotSource& source, std::shared_ptr<const Schema> schema, const Store& store, Limits limits,
         const std::string& web_dir, const IsolatedIrReader& ir_reader, OriginPolicy origin_policy)
    : source_(source),
      schema_(std::move(schema)),
      checker_(store, schema_->catalog, schema_->targets),
      limits_(limits),
      ir_reader_(ir_reader),
      origin_policy_(std::move(origin_policy)),
      cache_(limits.cache_bytes),
      compute_(limits.compute_slots ? limits.compute_slots : static_cast<unsigned>(usable_cpus()), limits.ir_per_client) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(web_dir) / "index.html", ec))
    throw usage_error("web folder '" + web_dir + "' has no index.html (give the page's folder with --web DIR)");
  // The page is a handful of files, read once: a request never opens a file, and a file that is a link
  // reaching outside this folder is refused here, so nothing served comes from elsewhere.
  const fs::path folder = fs::canonical(web_dir, ec);
  for (const auto& entry : fs::directory_iterator(web_dir)) {
    if (!entry.is_regular_file()) continue;
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (entry.is_symlink()) {
      fs::path real = fs::canonical(entry.path(), ec);
      if (ec || real.parent_path() != folder)
        throw usage_error("web folder '" + web_dir + "': '" + name + "' links outside the folder (to " +
                          (ec ? std::string("a path that cannot be resolved") : real.string()) +
                          "); the page's files are served from the folder itself");
    }
    WebFile f;
    f.body = read_file(entry.path());
    f.content_type = content_type_for(name);
    f.etag = "\"" + digest_hex(f.body) + "\"";
    web_["/" + name] = std::move(f);
  }
}

Reply Api::handle(const Request& request) const {
  if (auto why = foreign_request(request, origin_policy_)) {
    Reply refused;
    refused.status = 403;
    refused.body = error_body(403, *why);
    refused.cache_control = "no-store";
    return refused;
  }
  Reply reply;
  bool cacheable = cache_.enabled() && (request.method == "GET" || request.method == "HEAD") &&
                   request.path.rfind("/v1/", 0) == 0 && request.path != "/v1/status" && request.path != "/v1/";
  const std::string cache_key = cacheable ? request.path + "?" + request.query : "";
  const std::string etag = cacheable ? source_.current()->etag : "";
  std::optional<Reply> cached = cacheable ? cache_.find(cache_key, etag) : std::nullopt;
  try {
    reply = cached ? *cached : route(request);
  } catch (const HttpError& e) {
    reply = Reply{};
    reply.status = e.status;
    reply.body = error_body(e.status, e.message);
    reply.allow = e.allow;
  } catch (const Error& e) {
    // The checker's usage errors are the client's (unknown target or key); unreadable IR is content the
    // server understood but cannot process; anything else is ours.
    int status = e.code() == kExitUsage ? 400 : e.code() == kExitBadInput ? 422 : 500;
    reply = Reply{};
    reply.status = status;
    reply.body = error_body(status, e.what());
  } catch (const std::exception& e) {
    reply = Reply{};
    reply.status = 500;
    reply.body = error_body(500, std::string("internal error: ") + e.what());
  }
  if (cacheable && !cached) cache_.keep(cache_key, etag, reply);
  if (reply.status == 200 && !reply.etag.empty() && !request.if_none_match.empty() &&
      (request.if_none_match == reply.etag || request.if_none_match == "*")) {
    reply.status = 304;
    reply.body.clear();
  }
  return reply;
}

// The segments of an API path after "/v1" ("/v1/cells/llvm22/k/gfx90a" -> cells, llvm22, k, gfx90a), a trailing
// slash dropped: a request's path, and a route's pattern ({names} for its arguments).
static std::vector<std::string> segments_after_v1(const std::string& path) {
  std::vector<std::string> segments;
  std::string rest = path.substr(3);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t next = rest.find('/', pos + 1);
    segments.push_back(rest.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1));
    if (next == std::string::npos) break;
    pos = next;
  }
  return segments;
}

Reply Api::route(const Request& r) const {
  const std::string& path = r.path;
  if (path == "/v1" || path.rfind("/v1/", 0) == 0) {
    std::vector<std::string> segments = segments_after_v1(path);
    for (const auto& s : segments)
      if (s.empty()) fail(404, "no such endpoint: " + path + " (GET /v1 lists them)");
    return api(r, segments);
  }
  return static_file(r);
}

const std::vector<Api::Route>& Api::routes() {
  // Endpoints without parameters refuse any, as every other endpoint refuses the ones it does not take.
  static const std::vector<Route> table = {
      {"GET", "/v1", "", "this list: every endpoint with its parameters",
       [](const Api& a, const Request& r, const auto&) { return Params(r.query).allow({}, {}), a.index(); }},
      {"GET", "/v1/status", "", "the snapshot served: generation, etag, load time, reload errors",
       [](const Api& a, const Request& r, const auto&) { return Params(r.query).allow({}, {}), a.status(); }},
      {"GET", "/v1/flavors", "", "every column with its provenance (column.json) and counts per status, and the flavor "
       "this service's build measures",
       [](const Api& a, const Request& r, const auto&) { return a.flavors(r, ""); }},
      {"GET", "/v1/flavors/{flavor}", "", "one column",
       [](const Api& a, const Request& r, const auto& v) { return a.flavors(r, v[0]); }},
      {"GET", "/v1/targets", "flavor", "targets with their family and the flavors that have cells for them",
       [](const Api& a, const Request& r, const auto&) { return a.targets(r); }},
      {"GET", "/v1/keys", "q, flavor, limit, offset", "decl keys, searchable",
       [](const Api& a, const Request& r, const auto&) { return a.keys(r); }},
      {"GET", "/v1/search", "q (required), limit", "catalog keys, intrinsics, builtins and instruction mnemonics by any "
       "spelling, ranked, each with what it leads to and the command that answers it",
       [](const Api& a, const Request& r, const auto&) { return a.search(r); }},
      {"GET", "/v1/cells/{flavor}/{key}/{target}", "", "one cell: status, lowered_to or evidence (the key in any "
       "spelling: its builtin, the intrinsic it poses); a processor only the census has: the census's answer",
       [](const Api& a, const Request& r, const auto& v) { return a.cell(r, v[0], v[1], v[2]); }},
      {"GET", "/v1/matrix", "flavor (required), q, keys, targets, family, status, detail, limit, offset",
       "keys by targets for a flavor",
       [](const Api& a, const Request& r, const auto&) { return a.matrix(r); }},
      {"GET", "/v1/history/{key}", "targets, source", "a key (in any spelling) across flavors, per target, with a summary; "
       "an intrinsic outside the catalog (or any, with source=census) across the censuses, per processor",
       [](const Api& a, const Request& r, const auto& v) { return a.history(r, v[0]); }},
      {"GET", "/v1/intrinsics/{flavor}/{name}", "targets", "an llvm.amdgcn.* intrinsic (or one instantiation) on every "
       "processor of the flavor's census: ok where any instantiation lowers, naming it; refused only where every one "
       "is; the instantiations listed",
       [](const Api& a, const Request& r, const auto& v) { return a.intrinsic(r, v[0], v[1]); }},
      {"GET", "/v1/diff/{from}/{to}", "group, q, targets, family", "cells that changed between two columns, grouped",
       [](const Api& a, const Request& r, const auto& v) { return a.diff(r, v[0], v[1]); }},
      {"POST", "/v1/check", "flavor, compiler_version, subject, target, targets (with IR as the body)",
       "the checker's verdict for keys, intrinsics or LLVM IR on targets of a flavor",
       [](const Api& a, const Request& r, const auto&) { return a.check(r); }},
  };
  return table;
}

Reply Api::api(const Request& r, const std::vector<std::string>& s) const {
  // Each route's pattern, split once: literals match themselves, {names} anything and are passed on.
  static const std::vector<std::vector<std::string>> patterns = [] {
    std::vector<std::vector<std::string>> out;
    for (const Route& route : routes()) out.push_back(segments_after_v1(route.path));
    return out;
  }();
  const std::string method = r.method == "HEAD" ? "GET" : r.method;
  const Route* other_method = nullptr;
  for (size_t k = 0; k < routes().size(); ++k) {
    const Route& route = routes()[k];
    const std::vector<std::string>& pattern = patterns[k];
    std::vector<std::string> args;
    if (pattern.size() != s.size()) continue;
    bool match = true;
    for (size_t i = 0; i < s.size() && match; ++i) {
      if (pattern[i].front() == '{') args.push_back(s[i]);
      else match = pattern[i] == s[i];
    }
    if (!match) continue;
    if (method != route.method) {
      other_method = &route;
      continue;
    }
    return route.handler(*this, r, args);
  }
  if (other_method) {
    bool get = std::string(other_method->method) == "GET";
    throw HttpError{405, r.method + " is not allowed on " + r.path + " (use " + other_method->method + ")",
                    get ? "GET, HEAD" : other_method->method};
  }
  fail(404, "no such endpoint: " + r.path + " (GET /v1 lists them)");
}

Reply Api::static_file(const Request& r) const {
  // Refuse any path that tries to climb out of the page's folder, however it is spelled (the path here is
  // already percent-decoded, so %2e%2e and %2f arrive as ".." and "/").
  const std::string& p = r.path;
  if (p.empty() || p[0] != '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos)
    fail(400, "refused: malformed path");
  size_t pos = 0;
  while (pos < p.size()) {
    size_t next = p.find('/', pos + 1);
    std::string seg = p.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (seg == ".." || seg == ".") fail(400, "refused: path traversal ('" + seg + "' in the path)");
    if (next == std::string::npos) break;
    pos = next;
  }
  if (r.method != "GET" && r.method != "HEAD")
    throw HttpError{405, r.method + " is not allowed on " + p + " (the page is read-only; use GET)", "GET, HEAD"};
  auto it = web_.find(p == "/" ? "/index.html" : p);
  if (it == web_.end()) fail(404, "no such file: " + p + " (the page is at /, the API at /v1)");
  Reply reply;
  reply.content_type = it->second.content_type;
  reply.body = it->second.body;
  reply.etag = it->second.etag;
  if (it->first == "/index.html") embed_initial_data(reply);
  return reply;
}

// The page arrives with what it draws first (the documents of /v1/flavors and of /v1/matrix for the flavor this
// build measures) as a JSON data block in place of its marker, so its first paint is the matrix, not an empty frame waiting for
// requests. A data block is not run (the page's Content-Security-Policy stands); every '<' in it is written
// \u003c, so nothing in the data can end the block. The page's ETag becomes the file's and the snapshot's.
std::string Api::site_page() const {
  Reply page;
  page.body = web_.at("/index.html").body;
  embed_initial_data(page, true);
  return page.body;
}

void Api::embed_initial_data(Reply& page, bool site) const {
  static const std::string kMarker = "<!-- archdb: initial data -->";
  size_t at = page.body.find(kMarker);
  if (at == std::string::npos) return;
  auto snap = source_.current();
  Request get;
  get.method = "GET";
  // The two documents as /v1/flavors and /v1/matrix answer them, side by side.
  std::string data = std::string(site ? "{\"site\":true," : "{") + "\"flavors\":" + flavors(get, "").body + ",\"matrix\":";
  const FlavorData* own = snap->flavor(linked_toolchain().flavor());
  if (own && !own->cells.empty()) {
    get.query = "flavor=" + own->row.name;
    data += matrix(get).body;
  } else {
    data += "null";
  }
  data += "}";
  std::string text;
  for (char c : data) text += c == '<' ? std::string("\\u003c") : std::string(1, c);
  page.body.replace(at, kMarker.size(), "<script type=\"application/json\" id=\"initial\">" + text + "</script>");
  page.etag = "\"" + digest_hex(page.etag + snap->etag) + "\"";
}

Reply Api::index() const {
  json j;
  j["service"] = "archdb";
  j["version"] = ARCHDB_VERSION;
  j["api"] = "v1";
  json e = json::array();
  for (const Route& route : routes())
    e.push_back({{"method", route.method}, {"path", route.path}, {"parameters", route.parameters},
                 {"description", route.description}});
  j["endpoints"] = e;
  return json_reply(j);
}

Reply Api::status() const {
  auto snap = source_.current();
  json j;
  j["service"] = "archdb";
  j["version"] = ARCHDB_VERSION;
  j["generation"] = snap->generation;
  j["etag"] = snap->etag;
  j["loaded_at"] = snap->loaded_at;
  j["load_ms"] = std::round(snap->load_ms * 10) / 10;
  j["flavors"] = snap->flavor_names();
  std::string err = source_.last_error();
  j["reload_error"] = err.empty() ? json(nullptr) : json(err);
  Reply r = json_reply(j);
  r.cache_control = "no-store";
  return r;
}

Reply Api::flavors(const Request& r, const std::string& one) const {
  Params(r.query).allow({}, {});
  auto snap = source_.current();
  if (!one.empty()) return json_reply(flavor_json(need_flavor(*snap, one)), snap);
  json list = json::array();
  for (const auto& f : snap->flavors) list.push_back(flavor_json(*f));
  // The flavor this service's own build measures: the page shows it first.
  return json_reply(json{{"flavors", list}, {"build_flavor", linked_toolchain().flavor()}}, snap);
}

Reply Api::targets(const Request& r) const {
  Params p(r.query);
  p.allow({"flavor"}, {});
  auto snap = source_.current();
  std::vector<std::string> names = schema_->targets.names;
  if (auto f = p.get("flavor")) {
    names = need_flavor(*snap, *f).targets;
  } else {
    std::set<std::string> extra;
    for (const auto& fl : snap->flavors)
      for (const auto& t : fl->targets)
        if (!schema_->targets.contains(t)) extra.insert(t);
    names.insert(names.end(), extra.begin(), extra.end());
  }
  json list = json::array();
  for (const auto& t : names) {
    std::vector<std::string> in;
    for (const auto& fl : snap->flavors)
      if (std::find(fl->targets.begin(), fl->targets.end(), t) != fl->targets.end()) in.push_back(fl->row.name);
    list.push_back({{"name", t}, {"family", target_family(t)}, {"wired", schema_->targets.contains(t)}, {"flavors", in}});
  }
  return json_reply(json{{"targets", list}, {"families", families_json(names)}}, snap);
}

Reply Api::keys(const Request& r) const {
  Params p(r.query);
  p.allow({"q", "flavor", "limit", "offset"}, {});
  auto snap = source_.current();
  std::string q = lower(p.get_or("q", ""));
  size_t limit = p.number("limit", static_cast<size_t>(-1)), offset = p.number("offset", 0);
  const FlavorData* only = nullptr;
  if (auto f = p.get("flavor")) only = &need_flavor(*snap, *f);

  std::set<std::string> all;
  if (only) {
    all.insert(only->keys.begin(), only->keys.end());
  } else {
    for (const auto& k : schema_->catalog.keys()) all.insert(k);
    for (const auto& f : snap->flavors) all.insert(f->keys.begin(), f->keys.end());
  }
  json list = json::array();
  size_t matched = 0;
  for (const auto& key : all) {
    const CatalogEntry* entry = schema_->catalog.find(key);
    std::string spec = entry ? (only ? entry->spec_for(only->row.name) : entry->spec).to_string() : "";
    std::string intrinsic;
    if (only) {
      auto [b, e] = only->key_cells(key);
      if (b != e) intrinsic = b->intrinsic;
    }
    if (!q.empty() && !contains_ci(key, q) && !contains_ci(spec, q) && !contains_ci(intrinsic, q)) continue;
    if (matched++ < offset || list.size() >= limit) continue;
    json k;
    k["key"] = key;
    k["spec"] = entry ? json(spec) : json(nullptr);
    if (entry && entry->wave64) k["wave64_spec"] = entry->wave64->to_string();  // on wave64 targets
    k["in_catalog"] = entry != nullptr;
    if (only) {
      k["intrinsic"] = intrinsic;
    } else {
      std::vector<std::string> in;
      for (const auto& f : snap->flavors)
        if (std::binary_search(f->keys.begin(), f->keys.end(), key)) in.push_back(f->row.name);
      k["flavors"] = in;
    }
    list.push_back(std::move(k));
  }
  json j;
  j["total"] = matched;
  j["offset"] = offset;
  j["keys"] = list;
  return json_reply(j, snap);
}

Reply Api::search(const Request& r) const {
  Params p(r.query);
  p.allow({"q", "limit"}, {});
  auto q = p.get("q");
  if (!q || normalize_name(*q).empty()) fail(400, "parameter 'q' is required: a name or part of one");
  size_t limit = p.number("limit", 20);
  auto snap = source_.current();
  size_t total = 0;
  auto hits = snap->names->search(*q, limit, &total);
  return json_reply(name_hits_json(*q, hits, total), snap);
}

// The catalog key `name` stands for (db/search.h NameIndex::resolve, as `archdb query` reads it); `name` itself
// where it is a key of some column or resolves to none. `how` receives the resolution's reason.
// The catalog key `name` stands for (`how` says how, where it was another spelling). A name the censuses answer
// (an intrinsic no key poses) goes to `census_intrinsic` where the caller takes one, else is a 404 saying where
// it is answered.
static std::string key_for(const Snapshot& snap, const Schema& schema, const std::string& name, std::string& how,
                           std::string* census_intrinsic = nullptr) {
  if (schema.catalog.find(name)) return name;
  for (const auto& f : snap.flavors)
    if (std::binary_search(f->keys.begin(), f->keys.end(), name)) return name;
  auto r = snap.names->resolve(name);
  if (!r) return name;
  if (r->kind != NameKind::kKey) {
    if (census_intrinsic) {
      *census_intrinsic = r->name;
      return "";
    }
    fail(404, "'" + name + "' is not a catalog key; the censuses answer " + r->name + ": GET /v1/intrinsics/{flavor}/" +
                  r->name);
  }
  how = r->how;
  return r->name;
}

// A census's answer for an intrinsic on one processor (intrinsic_answers): the cell, the instantiation that
// decided it, and that the census gave it.
static json census_answer_json(const FlavorData& f, const Cell& answer) {
  json j = cell_json(f, answer);
  j["instantiation"] = answer.key;
  j["source"] = "census";
  return j;
}

// The rows of `full` in one flavor's census (an intrinsic's instantiations, or one instantiation by its own
// name) with their cells on `targets` (every processor of the census where empty), cells sorted by (key,
// target) as the store gives them. No instantiations: the census did not measure it (or there is no census).
static CensusOfIntrinsic census_rows(const FlavorData& f, const std::string& full, std::vector<std::string> targets) {
  CensusOfIntrinsic out{f.row.name, {}, {}};
  const CensusIndex* census = f.index.census.get();
  if (!census) return out;
  if (auto of = census->instantiations_of.find(full); of != census->instantiations_of.end()) {
    for (const std::string& key : of->second) out.instantiations.push_back({key, full, {}});
  } else if (census->by_name.count(full)) {
    out.instantiations.push_back({full, full, {}});  // one instantiation, named as a kernel's IR names it
  }
  if (targets.empty()) targets = census->processors;
  for (const CensusInstantiation& inst : out.instantiations)
    for (const std::string& target : targets)
      if (std::optional<Cell> c = census->find(inst.key, target)) out.cells.push_back(std::move(*c));
  std::sort(out.cells.begin(), out.cells.end(),
            [](const Cell& a, const Cell& b) { return std::tie(a.key, a.target) < std::tie(b.key, b.target); });
  return out;
}

Reply Api::cell(const Request& r, const std::string& flavor, const std::string& named_key, const std::string& named) const {
  Params(r.query).allow({}, {});
  const std::string target = canonical_target(named);
  auto snap = source_.current();
  const FlavorData& f = need_flavor(*snap, flavor);
  std::string how;
  const std::string key = key_for(*snap, *schema_, named_key, how);
  if (const Cell* c = f.find(key, target)) {
    json j = cell_json(f, *c);
    if (!how.empty()) j["resolved"] = {{"asked", named_key}, {"how", how}};
    return json_reply(j, snap);
  }
  if (f.cells.empty()) fail(404, no_cells_reason(f));
  if (!std::binary_search(f.keys.begin(), f.keys.end(), key))
    fail(404, unknown_key_message(*schema_, key) + " in " + flavor);
  // A processor of the census but not of the column: the census answers the instantiation the key poses.
  const CensusIndex* census = f.index.census.get();
  if (census && std::binary_search(census->processors.begin(), census->processors.end(), target)) {
    auto [b, e] = f.key_cells(key);
    std::vector<const Cell*> mine;
    for (const Cell* c = b; c != e; ++c) mine.push_back(c);
    if (std::optional<std::string> inst = plain_instantiation(mine)) {
      CensusOfIntrinsic rows = census_rows(f, *inst, {target});
      std::map<std::string, Cell> weighed = intrinsic_answers(rows.instantiations, rows.cells);
      if (auto answer = weighed.find(target); answer != weighed.end()) {
        json j = census_answer_json(f, answer->second);
        j["asked"] = {{"key", key}, {"target", target}};
        j["note"] = target + " is not a target of " + flavor + "'s column: its census answers " + *inst +
                    ", the intrinsic " + key + " poses, as the census poses it";
        return json_reply(j, snap);
      }
    }
  }
  fail(404, "no cell for " + key + " on '" + target + "' in " + flavor + " (its targets: " + join(f.targets, ", ") + ")");
}

Reply Api::intrinsic(const Request& r, const std::string& flavor, const std::string& name) const {
  Params p(r.query);
  p.allow({}, {"targets"});
  auto snap = source_.current();
  const FlavorData& f = need_flavor(*snap, flavor);
  const CensusIndex* census = f.index.census.get();
  if (!census || census->processors.empty()) fail(404, flavor + " has no census (archdb census --flavor " + flavor + ")");
  const std::string full = full_intrinsic_name(name);
  std::vector<std::string> targets = census->processors;
  if (std::vector<std::string> only = p.list("targets"); !only.empty()) {
    for (const std::string& t : only)
      if (!std::binary_search(targets.begin(), targets.end(), t))
        fail(400, "'" + t + "' is not a processor of " + flavor + "'s census");
    targets = only;
  }
  CensusOfIntrinsic rows = census_rows(f, full, targets);
  if (rows.instantiations.empty()) {
    if (census->intrinsics.count(full))
      fail(404, full + " is an intrinsic of " + flavor + " that its census could not instantiate (archdb query " + full + ")");
    fail(404, "'" + name + "' is not an llvm.amdgcn.* intrinsic of " + flavor + "'s census");
  }
  std::map<std::string, Cell> weighed = intrinsic_answers(rows.instantiations, rows.cells);
  json answers = json::object();
  for (const std::string& target : targets) {
    auto answer = weighed.find(target);
    if (answer == weighed.end()) continue;
    answers[target] = census_answer_json(f, answer->second);
  }
  json keys = json::array();
  for (const CensusInstantiation& inst : rows.instantiations) keys.push_back(inst.key);
  json j;
  j["flavor"] = flavor;
  j["intrinsic"] = full;
  j["instantiations"] = keys;
  j["answers"] = answers;
  return json_reply(j, snap);
}

Reply Api::matrix(const Request& r) const {
  Params p(r.query);
  p.allow({"flavor", "q", "detail", "limit", "offset"}, {"keys", "targets", "family", "status"});
  auto flavor = p.get("flavor");
  if (!flavor || flavor->empty()) fail(400, "parameter 'flavor' is required (GET /v1/flavors lists them)");
  auto snap = source_.current();
  const FlavorData& f = need_flavor(*snap, *flavor);
  std::vector<std::string> targets = select_targets(f.targets, p, f.row.name);
  std::string detail = p.get_or("detail", "status");
  if (detail != "status" && detail != "full") fail(400, "parameter 'detail' is 'status' or 'full', not '" + detail + "'");
  std::set<Status> statuses = parse_statuses(p.list("status"));
  std::vector<std::string> wanted_keys = p.list("keys");
  for (const auto& k : wanted_keys)
    if (!std::binary_search(f.keys.begin(), f.keys.end(), k)) fail(400, unknown_key_message(*schema_, k) + " in " + f.row.name);
  std::string q = lower(p.get_or("q", ""));
  size_t limit = p.number("limit", static_cast<size_t>(-1)), offset = p.number("offset", 0);

  json rows = json::array();
  std::map<std::string, int> counts;
  size_t matched = 0;
  for (const auto& key : f.keys) {
    if (!wanted_keys.empty() && std::find(wanted_keys.begin(), wanted_keys.end(), key) == wanted_keys.end()) continue;
    auto [b, e] = f.key_cells(key);
    std::string intrinsic = b != e ? b->intrinsic : "";
    if (!q.empty() && !contains_ci(key, q) && !contains_ci(intrinsic, q)) continue;
    std::vector<const Cell*> row;
    bool status_hit = statuses.empty();
    for (const auto& t : targets) {
      const Cell* c = nullptr;
      for (const Cell* it = b; it != e; ++it)
        if (it->target == t) c = it;
      if (c && statuses.count(c->status)) status_hit = true;
      row.push_back(c);
    }
    if (!status_hit) continue;
    for (const Cell* c : row)
      if (c) ++counts[std::string(status_name(c->status))];
    if (matched++ < offset || rows.size() >= limit) continue;
    json jr;
    jr["key"] = key;
    jr["intrinsic"] = intrinsic;
    json cells = json::array();
    for (const Cell* c : row) {
      if (!c) cells.push_back(nullptr);
      else if (detail == "full") cells.push_back(cell_to_json(*c));
      else cells.push_back(std::string(status_name(c->status)));
    }
    jr[detail == "full" ? "cells" : "statuses"] = cells;
    rows.push_back(std::move(jr));
  }
  json j;
  j["flavor"] = f.row.name;
  j["origin"] = std::string(origin_name(f.row.origin));
  j["targets"] = targets;
  j["families"] = families_json(targets);
  j["total_keys"] = f.keys.size();
  j["matched_keys"] = matched;
  j["offset"] = offset;
  json jc = json::object();
  for (Status s : storable_statuses()) jc[std::string(status_name(s))] = counts[std::string(status_name(s))];
  j["counts"] = jc;
  if (f.cells.empty()) j["note"] = no_cells_reason(f);
  j["rows"] = rows;
  return json_reply(j, snap);
}

Reply Api::history(const Request& r, const std::string& named_key) const {
  Params p(r.query);
  p.allow({"source"}, {"targets"});
  auto snap = source_.current();
  std::string how, census_intrinsic;
  // source=census: the censuses' answers for an intrinsic even where a catalog key poses it.
  const std::string source = p.get_or("source", "");
  if (!source.empty() && source != "census") fail(400, "parameter 'source' takes 'census', not '" + source + "'");
  const std::string key = source == "census" ? (census_intrinsic = full_intrinsic_name(named_key), "")
                                             : key_for(*snap, *schema_, named_key, how, &census_intrinsic);
  if (!census_intrinsic.empty()) {
    // An intrinsic outside the catalog: every census's answer per processor, as `archdb history NAME --json`.
    std::vector<CensusOfIntrinsic> censuses;
    std::set<std::string> processors;
    for (const auto& f : snap->flavors) {
      censuses.push_back(census_rows(*f, census_intrinsic, {}));
      if (f->index.census) processors.insert(f->index.census->processors.begin(), f->index.census->processors.end());
    }
    std::vector<std::string> wanted = p.targets("targets");
    for (const auto& t : wanted)
      if (!processors.count(t)) fail(400, "unknown target '" + t + "' for " + census_intrinsic + " (not a processor of any census)");
    IntrinsicHistory h = intrinsic_history(census_intrinsic, censuses, wanted);
    if (h.empty()) fail(404, census_intrinsic + " is an intrinsic that no census could instantiate (archdb query " + census_intrinsic + ")");
    return json_reply(h.to_json(), snap);
  }
  // The same document as `archdb history KEY --json`, from the shared history logic (db/history.h).
  std::set<std::string> seen;
  for (const auto& f : snap->flavors) {
    auto [b, e] = f->key_cells(key);
    for (const Cell* c = b; c != e; ++c) seen.insert(c->target);
  }
  if (seen.empty())
    fail(404, schema_->catalog.find(key) ? unknown_key_message(*schema_, key)
                                         : snap->names->unknown_message(key, "GET /v1/search?q=" + key));
  std::vector<std::string> order;
  std::vector<std::string> wanted = p.targets("targets");
  for (const auto& t : wanted)
    if (!seen.count(t)) fail(400, "unknown target '" + t + "' for key '" + key + "'");
  if (!wanted.empty()) {
    order = wanted;
  } else {
    for (const auto& t : schema_->targets.names)
      if (seen.count(t)) order.push_back(t);
    for (const auto& t : seen)
      if (std::find(order.begin(), order.end(), t) == order.end()) order.push_back(t);
  }
  json out;
  out["key"] = key;
  if (!how.empty()) out["resolved"] = {{"asked", named_key}, {"how", how}};
  json fl = json::array();
  for (const auto& f : snap->flavors) fl.push_back({{"name", f->row.name}, {"origin", std::string(origin_name(f->row.origin))}});
  out["flavors"] = fl;
  out["targets"] = history_targets_json(order, [&](const std::string& t) {
    std::vector<FlavorCell> row;
    for (const auto& f : snap->flavors)
      row.push_back({f->row.name, f->row.origin == Origin::kImported, f->find(key, t)});
    return row;
  }, false);
  return json_reply(out, snap);
}

Reply Api::diff(const Request& r, const std::string& from, const std::string& to) const {
  Params p(r.query);
  p.allow({"q"}, {"group", "targets", "family"});
  auto snap = source_.current();
  const FlavorData& a = need_flavor(*snap, from);
  const FlavorData& b = need_flavor(*snap, to);
  std::vector<std::string> groups = p.list("group");
  for (const auto& g : groups)
    if (!is_change_group(g)) fail(400, unknown_change_group(g));
  std::vector<std::string> both;
  for (const auto& t : a.targets)
    if (std::find(b.targets.begin(), b.targets.end(), t) != b.targets.end()) both.push_back(t);
  bool target_filter = !p.list("targets").empty() || !p.list("family").empty();
  std::vector<std::string> targets = target_filter ? select_targets(both, p, from + " and " + to) : both;
  std::string q = lower(p.get_or("q", ""));

  // The same grouping as `archdb diff FROM TO --json` (change_group in db/history.h).
  std::map<std::string, std::vector<std::pair<const Cell*, const Cell*>>> changed;
  size_t shared = 0;
  for (const Cell& c : b.cells) {
    if (target_filter && !diff_keeps_target(targets, c.target)) continue;  // a processor keeps its featured targets
    if (!q.empty() && !contains_ci(c.key, q) && !contains_ci(c.intrinsic, q)) continue;
    const Cell* before = a.find(c.key, c.target);
    if (!before) continue;
    ++shared;
    std::string g = change_group(*before, c);
    if (g.empty() || (!groups.empty() && std::find(groups.begin(), groups.end(), g) == groups.end())) continue;
    changed[g].push_back({before, &c});
  }
  json out;
  out["from"] = from;
  out["to"] = to;
  out["shared_cells"] = shared;
  size_t n = 0;
  json gs = json::object();
  for (const auto& name : change_groups()) {
    auto it = changed.find(name);
    if (it == changed.end()) continue;
    json list = json::array();
    for (const auto& [x, y] : it->second)
      list.push_back({{"key", x->key}, {"target", x->target}, {"from", cell_to_json(*x)}, {"to", cell_to_json(*y)}});
    n += it->second.size();
    gs[name] = list;
  }
  out["changed_cells"] = n;
  out["groups"] = gs;
  return json_reply(out, snap);
}

Reply Api::check(const Request& r) const {
  std::string type = media_type(r.content_type);
  bool form = type == "application/x-www-form-urlencoded" || type.empty();
  bool body_is_json = type == "application/json" ||
                      (form && r.body.find_first_not_of(" \t\r\n") != std::string::npos &&
                       r.body[r.body.find_first_not_of(" \t\r\n")] == '{');
  bool body_is_ir = type == "text/plain" || type == "text/x-llvm-ir" || type == "application/octet-stream";
  if (!body_is_json && !body_is_ir) {
    if (form && r.body.empty()) fail(400, "empty request body: send JSON (Content-Type: application/json) or IR");
    throw HttpError{415, "Content-Type '" + r.content_type +
                             "' is not accepted: send JSON (application/json) or IR (text/plain, text/x-llvm-ir, "
                             "application/octet-stream for bitcode)", ""};
  }

  CheckInput in;
  std::optional<std::string> compiler_version;
  if (body_is_json) {
    Params(r.query).allow({}, {});
    if (size_t depth = json_depth(r.body); depth > kMaxJsonDepth)
      fail(400, "the body's JSON nests " + std::to_string(depth) + " levels deep (at most " +
                    std::to_string(kMaxJsonDepth) + " are read)");
    nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) {
      // Say where: parse again for the library's message (offset of the first bad byte).
      std::string why = "malformed JSON";
      try {
        auto again = nlohmann::json::parse(r.body);
        (void)again;
      } catch (const nlohmann::json::exception& e) {
        why = std::string("malformed JSON: ") + e.what();
      }
      fail(400, why);
    }
    if (!body.is_object()) fail(400, "the body must be a JSON object");
    static const std::vector<std::string> kFields = {"flavor", "compiler_version", "target", "targets", "keys",
                                                     "intrinsics", "ir", "subject"};
    std::vector<std::string> unknown;
    for (auto it = body.begin(); it != body.end(); ++it)
      if (std::find(kFields.begin(), kFields.end(), it.key()) == kFields.end()) unknown.push_back("'" + it.key() + "'");
    if (!unknown.empty())
      fail(400, std::string(unknown.size() == 1 ? "unknown field " : "unknown fields ") + join(unknown, ", ") +
                    " (fields: " + join(kFields, ", ") + ")");
    auto str = [&](const char* field) -> std::optional<std::string> {
      if (!body.contains(field)) return std::nullopt;
      if (!body[field].is_string()) fail(400, std::string("field '") + field + "' must be a string");
      return body[field].get<std::string>();
    };
    if (auto v = str("flavor")) in.flavor = *v;
    compiler_version = str("compiler_version");
    if (auto v = str("subject")) in.subject = *v;
    if (auto v = str("target")) in.targets.push_back(*v);
    if (body.contains("targets")) {
      if (!in.targets.empty()) fail(400, "give 'target' or 'targets', not both");
      in.targets = string_array(body["targets"], "targets");
    }
    for (auto& t : in.targets) t = canonical_target(t);
    if (body.contains("keys")) in.keys = string_array(body["keys"], "keys");
    if (body.contains("intrinsics")) in.intrinsics = string_array(body["intrinsics"], "intrinsics");
    in.ir = str("ir");
    int inputs = body.contains("keys") + body.contains("intrinsics") + body.contains("ir");
    if (inputs != 1) fail(400, "give exactly one of 'keys', 'intrinsics' and 'ir'");
  } else {
    Params p(r.query);
    p.allow({"flavor", "compiler_version", "subject"}, {"target", "targets"});
    in.flavor = p.get_or("flavor", "");
    compiler_version = p.get("compiler_version");
    in.subject = p.get_or("subject", "");
    in.targets = p.targets("target");
    for (auto& t : p.targets("targets")) in.targets.push_back(t);
    in.ir = r.body;
  }

  if (!in.flavor.empty() && compiler_version) fail(400, "give 'flavor' or 'compiler_version', not both");
  if (compiler_version) {
    auto f = flavor_from_version_text(*compiler_version);
    if (!f) fail(400, "'compiler_version' names no clang or LLVM version (expected e.g. \"clang version 22.1.8\")");
    in.flavor = *f;
  }
  if (in.flavor.empty()) fail(400, "'flavor' is required (e.g. \"llvm22\"), or 'compiler_version'");
  if (!is_valid_flavor(in.flavor)) fail(400, "unknown flavor '" + in.flavor + "' (a flavor is llvm<major>, e.g. llvm22)");
  if (in.targets.empty()) fail(400, "'target' (or 'targets') is required");
  // A target is the checker's to judge (a wired target, or a processor of the flavor's census), as for
  // `archdb check`: an unknown one is its usage error, a 400.

  // Said here rather than by the checker, whose message names the catalog's file: a response names no path
  // of this machine.
  for (const auto& k : in.keys)
    if (!schema_->catalog.find(k) && !names_uncatalogued(k))
      fail(400, unknown_key_message(*schema_, k, std::string("neither in the catalog nor ") + kUncataloguedNames));

  CheckRequest request;
  request.flavor = in.flavor;
  request.subject = in.subject;
  request.keys = in.keys;
  request.intrinsics = in.intrinsics;
  std::vector<std::string> kernels;
  if (in.ir) {
    if (in.ir->size() > limits_.max_ir)
      fail(413, "the IR is " + std::to_string(in.ir->size()) + " bytes; the limit is " + std::to_string(limits_.max_ir) +
                    " bytes");
    std::string name = in.subject.empty() ? "request.ll" : in.subject;
    IrUses uses;
    {
      ComputeSlots::Slot slot = compute_.acquire(r.client);  // 429 for a client past its share
      uses = ir_reader_.read(*in.ir, name);  // an empty, crashing or endless read is a 422 naming it
    }
    add_ir_uses(request, uses);
    kernels = uses.kernels;
    if (request.subject.empty() && kernels.size() == 1) request.subject = kernels.front();
  } else if (request.keys.empty() && request.intrinsics.empty()) {
    fail(400, "nothing to check: the list is empty");
  }

  auto snap = source_.current();
  const FlavorData* f = snap->flavor(in.flavor);
  ColumnIndex none;
  none.flavor = in.flavor;
  none.why_no_cells = "no measured column for " + in.flavor;
  const ColumnIndex& column = f ? f->index : none;

  json results = json::array();
  Verdict worst = Verdict::kCleared;
  for (const auto& t : in.targets) {
    request.target = t;
    CheckResult result = checker_.check(request, column);  // IR that calls no target intrinsic is cleared
    if (result.verdict == Verdict::kRefused || (result.verdict == Verdict::kUnvalidated && worst == Verdict::kCleared))
      worst = result.verdict;
    results.push_back(result.to_json());
  }
  json out;
  out["flavor"] = in.flavor;
  out["verdict"] = std::string(verdict_name(worst));
  if (in.ir) out["kernels"] = kernels;
  out["results"] = results;
  Reply reply = json_reply(out);
  reply.cache_control = "no-store";
  return reply;
}

}  // namespace archdb::service
