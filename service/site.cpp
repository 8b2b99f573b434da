// service/site.cpp — the static site (see site.h): the service's answers to the page's GETs, written as files,
// and a page per key and census intrinsic rendered from the history documents.
#include "service/site.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <system_error>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "db/search.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb::service {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kMarker = "archdb-site.json";

// A name becomes a file name as it is: the page asks for exactly that file.
const std::string& safe_name(const std::string& name) {
  bool ok = !name.empty() && name != "." && name != "..";
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  if (!ok) throw internal_error("'" + name + "' cannot name a file of the site (only letters, digits, '.', '_', '-')");
  return name;
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

class SiteWriter {
 public:
  SiteWriter(const Api& api, fs::path root) : api_(api), root_(std::move(root)) {}

  // The body of the service's 200 answer to GET path?query; any other answer is ours to fix, not the reader's.
  std::string get(const std::string& path, const std::string& query = "") const {
    Request r;
    r.method = "GET";
    r.path = path;
    r.query = query;
    Reply reply = api_.handle(r);
    if (reply.status != 200)
      throw internal_error("the site's GET " + path + (query.empty() ? "" : "?" + query) + " was answered " +
                           std::to_string(reply.status) + ": " + reply.body);
    return reply.body;
  }

  void put(const std::string& relative, const std::string& body) {
    fs::path file = root_ / relative;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.close();
    if (ec || !out) throw input_error(file.string() + ": cannot write the site's file");
    ++summary.files;
    summary.bytes += body.size();
  }

  SiteSummary summary;

 private:
  const Api& api_;
  fs::path root_;
};

std::string page_head(const std::string& title, const std::string& up) {
  return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" + html_escape(title) +
         " — archdb</title>\n<link rel=\"icon\" href=\"data:,\">\n<link rel=\"stylesheet\" href=\"" + up +
         "style.css\">\n</head>\n<body class=\"answer-page\">\n<header class=\"top\"><h1><a href=\"" + up +
         "index.html\">archdb</a></h1><p class=\"question\">" + html_escape(title) + "</p></header>\n<main>\n";
}

const char* kPageEnd = "</main>\n</body>\n</html>\n";

std::string badge(const std::string& status) {
  return "<span class=\"badge s-" + html_escape(status) + "\">" + html_escape(status) + "</span>";
}

// "operands: divergent, result: used"
std::string posed_text(const json& posed) {
  std::string out;
  for (const auto& [k, v] : posed.items())
    out += (out.empty() ? "" : ", ") + k + ": " + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// One page for a history document (a key's columns or an intrinsic's censuses): the status of every target in
// every flavor with the summary, then the evidence of every answer.
std::string history_page(const json& doc, const std::string& title, const std::string& lead, const std::string& json_link,
                         const std::string& api_get) {
  std::string h = page_head(title, "../");
  h += "<p class=\"lead\">" + lead + "</p>\n<table class=\"history\">\n<tr><th>target</th>";
  for (const auto& f : doc["flavors"]) {
    std::string name = f["name"];
    std::string origin = f["origin"];
    h += "<th>" + html_escape(name) + (origin == "descriptor" ? " (not measured)" : origin == "imported" ? " (imported)" : "") +
         "</th>";
  }
  h += "<th>summary</th></tr>\n";
  for (const auto& [target, row] : doc["targets"].items()) {
    h += "<tr data-target=\"" + html_escape(target) + "\"><th>" + html_escape(target) + "</th>";
    for (const auto& f : doc["flavors"]) {
      const json& c = row["cells"][f["name"].get<std::string>()];
      h += "<td>" + (c.is_null() ? std::string("—") : badge(c["status"])) + "</td>";
    }
    h += "<td class=\"summary\">" + html_escape(row["summary"]) + "</td></tr>\n";
  }
  // The evidence, per flavor, each answer once with the targets it holds for (processors share most of theirs).
  h += "</table>\n<h2>Evidence</h2>\n";
  for (const auto& f : doc["flavors"]) {
    const std::string flavor = f["name"];
    std::vector<std::pair<std::string, std::vector<std::string>>> answers;  // rendered answer -> its targets
    for (const auto& [target, row] : doc["targets"].items()) {
      const json& c = row["cells"][flavor];
      if (c.is_null()) continue;
      std::string a = badge(c["status"]) + " <code>" + html_escape(c.value("instantiation", c.value("intrinsic", ""))) + "</code>";
      if (c.contains("lowered_to")) {
        std::vector<std::string> ins;
        for (const auto& m : c["lowered_to"]) ins.push_back(m);
        a += " lowered to <pre class=\"lowered\">" + html_escape(ins.empty() ? "(no instruction)" : join(ins, "\n")) + "</pre>";
      }
      if (c.contains("evidence")) a += "<pre class=\"evidence\">" + html_escape(c["evidence"]) + "</pre>";
      if (c.contains("posed")) a += "<p class=\"posed\">posed with " + html_escape(posed_text(c["posed"])) + "</p>";
      auto same = std::find_if(answers.begin(), answers.end(), [&](const auto& x) { return x.first == a; });
      if (same == answers.end()) answers.push_back({a, {target}});
      else same->second.push_back(target);
    }
    if (answers.empty()) continue;
    h += "<section class=\"flavor\" data-flavor=\"" + html_escape(flavor) + "\"><h3>" + html_escape(flavor) + "</h3>\n<dl>\n";
    for (const auto& [a, targets] : answers)
      h += "<dt>" + html_escape(join(targets, ", ")) + "</dt><dd>" + a + "</dd>\n";
    h += "</dl></section>\n";
  }
  h += "<p><a href=\"" + html_escape(json_link) + "\">this page as JSON</a>: the document of <code>GET " +
       html_escape(api_get) + "</code> of <code>archdb serve</code></p>\n";
  return h + kPageEnd;
}

std::string index_page(const std::string& title, const std::string& lead, const std::vector<std::string>& names) {
  std::string h = page_head(title, "../") + "<p class=\"lead\">" + lead + "</p>\n<ul class=\"names\">\n";
  for (const auto& n : names) h += "<li><a href=\"" + html_escape(n) + ".html\">" + html_escape(n) + "</a></li>\n";
  return h + "</ul>\n" + kPageEnd;
}

// Where the site is written: DIR must be missing, empty, or an earlier site.
void check_destination(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec)) throw usage_error(out.string() + ": exists and is not a folder; the site needs a folder");
  if (fs::is_empty(out, ec) || fs::exists(out / kMarker, ec)) return;
  throw usage_error(out.string() + ": is neither empty nor an archdb site (no " + kMarker +
                    "); name a new folder, or an earlier site to replace");
}

}  // namespace

SiteSummary write_site(const Api& api, const fs::path& out_given) {
  const fs::path out = fs::absolute(out_given).lexically_normal();
  if (out.filename().empty() || !fs::is_directory(out.parent_path()))
    throw usage_error(out_given.string() + ": the folder it would be in does not exist");
  check_destination(out);
  const fs::path staging = out.parent_path() / ("." + out.filename().string() + ".staging-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!fs::create_directory(staging, ec))
    throw input_error(staging.string() + ": cannot make the site's staging folder: " + ec.message());
  try {
    SiteWriter w(api, staging);
    auto snap = api.snapshot();

    w.put("index.html", api.site_page());
    for (const char* file : {"/app.js", "/style.css"}) w.put(file + 1, w.get(file));
    w.put("v1/flavors.json", w.get("/v1/flavors"));

    std::set<std::string> keys;
    std::vector<std::string> measured;
    json flavor_names = json::array();
    for (const auto& f : snap->flavors) {
      if (f->cells.empty()) continue;
      const std::string& name = safe_name(f->row.name);
      flavor_names.push_back(name);
      ++w.summary.flavors;
      w.put("v1/matrix/" + name + ".json", w.get("/v1/matrix", "flavor=" + name));
      keys.insert(f->keys.begin(), f->keys.end());
      if (f->row.origin == Origin::kMeasured) measured.push_back(name);
    }

    // A page per key: its cells in every flavor (the page's detail reads them), its history, its page.
    for (const std::string& key : keys) {
      safe_name(key);
      json cells = json::object();
      for (const auto& f : snap->flavors) {
        auto [b, e] = f->key_cells(key);
        for (const Cell* c = b; c != e; ++c)
          cells[f->row.name][c->target] = json::parse(w.get("/v1/cells/" + f->row.name + "/" + key + "/" + c->target));
      }
      w.put("v1/cells/" + key + ".json", cells.dump() + "\n");
      const std::string history = w.get("/v1/history/" + key);
      w.put("v1/history/" + key + ".json", history);
      json doc = json::parse(history);
      std::set<std::string> intrinsics;
      for (const auto& [target, row] : doc["targets"].items())
        for (const auto& [flavor, c] : row["cells"].items())
          if (!c.is_null()) intrinsics.insert(c["intrinsic"].get<std::string>());
      w.put("keys/" + key + ".html",
            history_page(doc, key, "catalog key <code>" + html_escape(key) + "</code>, posed as <code>" +
                                       html_escape(join(std::vector<std::string>(intrinsics.begin(), intrinsics.end()), ", ")) +
                                       "</code>: its cell on every target in every column, with the evidence.",
                         "../v1/history/" + key + ".json", "/v1/history/" + key));
      ++w.summary.keys;
    }
    w.put("keys/index.html", index_page("every catalog key", std::to_string(keys.size()) +
                                        " catalog keys, each with its cell on every target in every column.",
                                        std::vector<std::string>(keys.begin(), keys.end())));

    // A page per census intrinsic: every census's answer per processor, weighed over its instantiations.
    std::set<std::string> intrinsics;
    for (const auto& f : snap->flavors) {
      const CensusIndex* census = f->index.census.get();
      if (!census) continue;
      for (const auto& [name, rows] : census->instantiations_of) {
        safe_name(name);
        intrinsics.insert(name);
      }
    }
    for (const std::string& name : intrinsics) {
      const std::string history = w.get("/v1/history/" + name, "source=census");
      w.put("v1/history/" + name + ".json", history);
      json doc = json::parse(history);
      std::string lead = "<code>" + html_escape(name) + "</code> in the censuses: on each processor, ok where any " +
                         "instantiation lowers, refused only where every one is. Instantiations measured: ";
      std::vector<std::string> per;
      for (const auto& f : doc["flavors"]) {
        std::vector<std::string> insts;
        for (const auto& i : f["instantiations"]) insts.push_back(i);
        per.push_back(html_escape(f["name"].get<std::string>()) + " <code>" + html_escape(join(insts, ", ")) + "</code>");
      }
      w.put("intrinsics/" + name + ".html", history_page(doc, name, lead + join(per, "; ") + ".", "../v1/history/" + name + ".json",
                                                      "/v1/history/" + name + "?source=census"));
      ++w.summary.intrinsics;
    }
    w.put("v1/intrinsics.json", json(std::vector<std::string>(intrinsics.begin(), intrinsics.end())).dump() + "\n");
    w.put("intrinsics/index.html",
          index_page("every intrinsic", std::to_string(intrinsics.size()) +
                                            " llvm.amdgcn.* intrinsics the censuses measured, each with its answer on every "
                                            "processor in every census.",
                     std::vector<std::string>(intrinsics.begin(), intrinsics.end())));

    for (const std::string& a : measured)
      for (const std::string& b : measured)
        if (a != b) w.put("v1/diff/" + a + "/" + b + ".json", w.get("/v1/diff/" + a + "/" + b));

    // Every name the search knows, normalized as it compares them, for the page's filter.
    json names = json::array();
    for (const NameEntry& e : snap->names->entries())
      names.push_back({{"name", e.name}, {"kind", std::string(name_kind_name(e.kind))}, {"n", normalize_name(e.name)},
                       {"means", e.means}});
    w.put("v1/names.json", names.dump() + "\n");

    json marker;
    marker["archdb"] = ARCHDB_VERSION;
    marker["snapshot"] = snap->etag;
    marker["flavors"] = flavor_names;
    marker["keys"] = w.summary.keys;
    marker["intrinsics"] = w.summary.intrinsics;
    w.put(kMarker, marker.dump(2) + "\n");

    // The new site takes the old one's place whole.
    const fs::path old = out.parent_path() / ("." + out.filename().string() + ".old-" + std::to_string(::getpid()));
    bool had = fs::exists(out, ec);
    if (had) {
      fs::rename(out, old, ec);
      if (ec) throw input_error(out.string() + ": cannot move the earlier site aside: " + ec.message());
    }
    fs::rename(staging, out, ec);
    if (ec) {
      std::error_code back;
      if (had) fs::rename(old, out, back);
      throw input_error(out.string() + ": cannot put the new site in place: " + ec.message());
    }
    if (had) fs::remove_all(old, ec);
    return w.summary;
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

SiteSummary write_site(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, const std::string& web_dir,
                       const fs::path& out) {
  IsolatedIrReader ir_reader;  // the Api's; a site never reads IR
  Limits limits;
  limits.cache_bytes = 0;  // every document is asked for once
  const Store& store_ref = *store;
  SnapshotSource source(std::move(store), schema);
  Api api(source, schema, store_ref, limits, web_dir, ir_reader);
  return write_site(api, out);
}

}  // namespace archdb::service
