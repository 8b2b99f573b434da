// service/site.h — archdb's answers as a static site (`archdb site --out DIR`), for any plain file server to
// publish, as MDN publishes browser-compat-data: the matrix page, the /v1 documents it reads as files, and one
// page per catalog key and per census intrinsic (its answers across flavors and processors, with evidence and
// history). Every document is the service's own answer to the matching GET (Api::handle), so the site says
// exactly what `archdb serve` would; only the file layout is the site's.
//
// Layout (every name is a key or intrinsic as archdb spells it: [A-Za-z0-9._-] only, else the site is refused):
//   index.html, app.js, style.css      the page (index.html's data block says `site`: it reads files, not /v1)
//   archdb-site.json                   what wrote the site (version, snapshot tag, counts): marks the folder a site
//   v1/flavors.json                    GET /v1/flavors
//   v1/matrix/F.json                   GET /v1/matrix?flavor=F, for each flavor with cells
//   v1/cells/KEY.json                  {flavor: {target: GET /v1/cells/F/KEY/T}}
//   v1/history/NAME.json               GET /v1/history/NAME for each key, GET /v1/history/NAME?source=census
//                                      for each census intrinsic (the page reads an intrinsic's answers there)
//   v1/diff/A/B.json                   GET /v1/diff/A/B, for each ordered pair of measured flavors
//   v1/intrinsics.json                 the census intrinsics the site has a page and a history of
//   v1/names.json                      every name the search knows: {name, kind, n (normalized), means}
//   keys/index.html, keys/KEY.html     a page per key
//   intrinsics/index.html, intrinsics/NAME.html   a page per census intrinsic
//
// Invariants: the site is written whole into a staging folder beside DIR and then put in DIR's place, so DIR
// is the old site or the new one, never a mix; DIR may be missing, empty, or an earlier site (it has
// archdb-site.json), anything else is refused and left alone.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "service/routes.h"

namespace archdb::service {

struct SiteSummary {
  size_t files = 0;
  size_t bytes = 0;
  size_t keys = 0;
  size_t intrinsics = 0;
  size_t flavors = 0;
};

// Throws usage_error for a DIR that is neither missing, empty nor an earlier site; input_error when a file
// cannot be written (nothing of DIR changed).
SiteSummary write_site(const Api& api, const std::filesystem::path& out);
// The same over `store`, answered as `archdb serve` would answer it (the page's files from `web_dir`).
SiteSummary write_site(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, const std::string& web_dir,
                       const std::filesystem::path& out);

}  // namespace archdb::service
