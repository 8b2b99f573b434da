// bench/bench.h — the speed and memory benchmark of the probe: the full column measured in process
// (median of N runs), and the subprocess method a peer uses (clang -x ir -O0 -nogpulib plus its ld.lld link,
// one process tree per cell) on the same cells, side by side in one run.
#pragma once

#include <string>
#include <vector>

#include "schema/catalog.h"

namespace archdb {

struct BenchOptions {
  std::string flavor;
  std::vector<std::string> targets;
  int repeat = 3;
  int jobs = 0;              // 0: the CPUs this process may use (both methods get the same)
  std::string clang;         // the peer's compiler driver, e.g. clang-22
  int subprocess_every = 1;  // run the subprocess method on every n-th cell (1: all of them)
  std::string work_dir;      // where kept modules and objects go
};

// Runs the benchmark and prints its figures to stdout. Returns an exit code.
int run_bench(const Catalog& catalog, const BenchOptions& options);

}  // namespace archdb
