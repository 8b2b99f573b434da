// bench/check_bench.cpp — the checker's figures: medians and 90th percentiles of repeated checks, measured
// side by side in one run.
#include "bench/check_bench.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/timing.h"
#include "checker/checker.h"
#include "checker/ir_reader.h"
#include "checker/ir_uses.h"
#include "db/census.h"
#include "db/frontend.h"
#include "support/error.h"
#include "support/spawn.h"

extern char** environ;

namespace archdb {

namespace {

using Clock = std::chrono::steady_clock;

using bench::Figures;
using bench::summarize;
using bench::time_it;

int spawn_and_wait(const std::vector<std::string>& args) { return run_child(args); }

}  // namespace

int run_check_bench(const CheckBenchOptions& o) {
  auto store = Store::open(o.db);
  Checker checker(*store, load_catalog(o.catalog), load_targets(o.targets_file));
  CheckRequest request;
  request.target = o.target;
  request.flavor = o.flavor;
  IrUses uses = scan_ir_file(o.ir);
  request.intrinsics = uses.target_intrinsics;
  request.generic_intrinsics = uses.generic_intrinsics;
  CheckResult sample = checker.check(request);
  std::printf("check bench: %s on %s (%s): %zu target intrinsics, verdict %s\n", o.ir.c_str(), o.target.c_str(),
              o.flavor.c_str(), uses.target_intrinsics.size(), std::string(verdict_name(sample.verdict)).c_str());

  Figures whole = time_it(o.repeat, [&] {
    IrUses u = scan_ir_file(o.ir);
    CheckRequest r = request;
    r.intrinsics = u.target_intrinsics;
    checker.check(r);  // loads the flavor's column from SQLite
  });
  ColumnIndex column = ColumnIndex::load(*store, o.flavor);
  Figures cached = time_it(o.repeat, [&] {
    IrUses u = scan_ir_file(o.ir);
    CheckRequest r = request;
    r.intrinsics = u.target_intrinsics;
    checker.check(r, column);
  });
  // In process and in an isolated child (what `check` and the service do), alternately: the cost of the isolation.
  // Every reading is read (no cache of readings), each by a fresh child as `check` reads it.
  IrReadLimits fresh;
  fresh.cached_readings = 0;
  IsolatedIrReader isolated_reader(fresh);
  std::vector<double> scan_ms, isolated_ms;
  for (int i = 0; i < o.repeat; ++i) {
    auto start = Clock::now();
    scan_ir_file(o.ir);
    scan_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    start = Clock::now();
    isolated_reader.read_file(o.ir);
    isolated_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  Figures scan = summarize(scan_ms), isolated = summarize(isolated_ms);
  Figures load = time_it(o.repeat, [&] { ColumnIndex::load(*store, o.flavor); });
  // What every command does before it answers: open (integrity check, migrations) and sync with data/.
  Figures open = time_it(std::max(5, o.repeat / 10), [&] {
    auto s = Store::open(o.db);
    s->mark_interrupted_runs();
    sync_store_from_data(*s, o.data);
    sync_census_from_data(*s, o.data);
    sync_frontend_from_data(*s, o.data);
  });
  int process_repeat = std::max(5, o.repeat / 10);
  auto process_args = [&](const std::string& exe) {
    return std::vector<std::string>{exe, "--db", o.db, "--data", o.data, "check", "--target", o.target, "--flavor",
                                    o.flavor, "--ir", o.ir};
  };
  // The two executables alternate, so both see the same machine load.
  std::vector<double> process_ms, compare_ms;
  for (int i = 0; i < process_repeat; ++i) {
    for (int which = 0; which < (o.compare_archdb.empty() ? 1 : 2); ++which) {
      auto start = Clock::now();
      spawn_and_wait(process_args(which == 0 ? o.archdb : o.compare_archdb));
      (which == 0 ? process_ms : compare_ms).push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
  Figures process = summarize(process_ms);

  std::printf("%-72s %10s %10s\n", "what (repeated)", "median ms", "p90 ms");
  auto row = [](const std::string& what, const Figures& f) {
    std::printf("%-72s %10.3f %10.3f\n", what.c_str(), f.median_ms, f.p90_ms);
  };
  row("check the IR, store already open (read IR + load column + verdict) x" + std::to_string(o.repeat), whole);
  row("check the IR, column held in memory (as the service) x" + std::to_string(o.repeat), cached);
  row("  of which: read the IR with LLVM x" + std::to_string(o.repeat), scan);
  row("read the IR with LLVM in an isolated child (as check and serve do) x" + std::to_string(o.repeat), isolated);
  row("  of which: load the column from SQLite x" + std::to_string(o.repeat), load);
  row("open the store and bring it up to date with data/ (every command) x" + std::to_string(process_repeat), open);
  row("whole `archdb check` process x" + std::to_string(process_repeat), process);
  if (!o.compare_archdb.empty())
    row("whole `archdb check` process of " + o.compare_archdb + " x" + std::to_string(process_repeat),
        summarize(compare_ms));
  std::printf("isolation: reading the IR in a child costs %.3f ms more than in process (median %.3f vs %.3f ms, x%.2f)\n",
              isolated.median_ms - scan.median_ms, isolated.median_ms, scan.median_ms,
              scan.median_ms > 0 ? isolated.median_ms / scan.median_ms : 0.0);
  std::printf("target: <= 20 ms to check one kernel's IR against the database: in process %s (%.3f ms); "
              "whole process %s (%.3f ms)\n",
              whole.median_ms <= 20.0 ? "met" : "NOT met", whole.median_ms,
              process.median_ms <= 20.0 ? "met" : "NOT met", process.median_ms);
  return kExitOk;
}

}  // namespace archdb
