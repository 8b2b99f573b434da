// bench/gate_bench.h — what deciding a build gate's matrix costs: N generated kernel manifests x M targets
// decided by one `archdb check` process (every --manifest at once) against the way a gate asked before, one
// process per (kernel, target) pair — timed in one run, the two alternating, and their verdicts compared.
#pragma once

#include <string>
#include <vector>

namespace archdb {

struct GateBenchOptions {
  int manifests = 1000;
  std::vector<std::string> targets;  // default: the gate's (gfx90a gfx942 gfx950 gfx1100 gfx1201 gfx1250)
  std::string flavor;
  int rounds = 3;
  int every = 30;       // the per-pair way runs every Nth pair (its total is extrapolated, and labelled so)
  std::string archdb;   // this archdb executable
  std::string db, data, catalog, targets_file;
};

int run_gate_bench(const GateBenchOptions& options);

}  // namespace archdb
