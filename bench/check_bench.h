// bench/check_bench.h — how long checking one kernel's IR against the database takes: in process with the
// store already open (reading the IR, loading the flavor's column, the verdict), opening the store as a
// command does (with its sync of data/), with the column already loaded (as the service holds it), and as a
// whole `archdb check` process — of this archdb and, side by side in the same run, of another one.
#pragma once

#include <string>

namespace archdb {

struct CheckBenchOptions {
  std::string ir;      // the kernel's IR (.ll or .bc)
  std::string target;
  std::string flavor;
  std::string db;      // an archdb database holding the flavor's column
  std::string archdb;  // the archdb executable, for the whole-process figure
  std::string compare_archdb;  // another archdb executable (e.g. an older build) timed alternately with it
  std::string catalog, targets_file, data;
  int repeat = 200;
};

int run_check_bench(const CheckBenchOptions& options);

}  // namespace archdb
