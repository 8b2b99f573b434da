// bench/search_bench.h — how long finding a name takes (db/search.h): building the index from the database (once
// per service snapshot, once per `search` or unresolved `query` command), one search on the built index (what
// /v1/search does per request), and a whole `archdb search` process; medians and 90th percentiles.
#pragma once

#include <string>

namespace archdb {

struct SearchBenchOptions {
  std::string db, catalog, data, targets_file;
  std::string archdb;  // the archdb executable, for the whole-process figure
  int repeat = 200;
};

int run_search_bench(const SearchBenchOptions& options);

}  // namespace archdb
