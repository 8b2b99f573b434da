// bench/search_bench.cpp — the search's figures (search_bench.h), on the spellings a HIP developer types.
#include "bench/search_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/timing.h"
#include "db/search.h"
#include "db/store.h"
#include "support/spawn.h"

namespace archdb {

namespace {

using bench::Figures;
using bench::time_it;

// Exact names in three spellings, parts of names, an instantiation, an instruction, a name that matches nothing.
const char* const kQueries[] = {"__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "llvm.amdgcn.permlane64", "s_sleep_var",
                                "mfma_f32_4x4x4bf16", "mfma", "dot4", "v_dot4_i32_iu8",
                                "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", "zz_no_such_name"};

}  // namespace

int run_search_bench(const SearchBenchOptions& o) {
  auto store = Store::open(o.db);
  Catalog catalog = load_catalog(o.catalog);
  NameIndex index = NameIndex::build(catalog, *store);
  std::printf("search bench: %zu names (keys, intrinsics, builtins, mnemonics) from %s\n", index.size(), o.db.c_str());
  int builds = std::max(3, o.repeat / 20);
  Figures build = time_it(builds, [&] { NameIndex::build(catalog, *store); });
  std::printf("  index build (per service snapshot): median %.1f ms, p90 %.1f ms (%d runs)\n", build.median_ms,
              build.p90_ms, builds);
  NameIndex::load_or_build(catalog, *store);  // kept in the store, as a command keeps it
  Figures load = time_it(builds, [&] { NameIndex::load_or_build(catalog, *store); });
  std::printf("  index kept in the database, read back (per command): median %.1f ms, p90 %.1f ms (%d runs)\n",
              load.median_ms, load.p90_ms, builds);
  double worst = 0;
  for (const char* q : kQueries) {
    size_t total = 0;
    Figures f = time_it(o.repeat, [&] { index.search(q, 20, &total); });
    Figures r = time_it(o.repeat, [&] { index.resolve(q); });
    worst = std::max({worst, f.median_ms, r.median_ms});
    std::printf("  %-48s %5zu hits  search median %.3f ms p90 %.3f ms; resolve median %.3f ms\n", q, total,
                f.median_ms, f.p90_ms, r.median_ms);
  }
  std::printf("  slowest median of one search or resolution on the built index: %.3f ms\n", worst);
  if (!o.archdb.empty()) {
    int processes = std::max(3, o.repeat / 20);
    Figures whole = time_it(processes, [&] {
      run_child({o.archdb, "--db", o.db, "--data", o.data, "--catalog", o.catalog, "--targets-file", o.targets_file,
                 "search", "mfma_f32_4x4x4bf16", "--json"},
                {{}, ChildStream::file("/dev/null"), ChildStream::file("/dev/null")});
    });
    std::printf("  whole `archdb search` process: median %.1f ms, p90 %.1f ms (%d runs)\n", whole.median_ms,
                whole.p90_ms, processes);
  }
  return 0;
}

}  // namespace archdb
