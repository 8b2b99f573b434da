// probe/verdict.h — from what the workers reported to a cell: pure functions of typed attempts, without LLVM
// and without processes, so every rule of the taxonomy is unit-tested with made-up reports
// (tests/verdict_test.cpp).
//
// Invariants: a cell is ok only when its probe (or the sweep value that lowered) reported no refusal, no error
// diagnostic and no undefined symbol, its baseline compiled, and, where the printed assembly did not
// re-assemble, the object codegen wrote itself was read; anything the probe failed to produce is probe_error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/column.h"
#include "probe/job.h"
#include "probe/resolve.h"

namespace archdb {

// One kernel compiled on one target: what the worker reported of it, or how the worker died on it.
struct Attempt {
  std::optional<CompileReport> report;
  std::optional<WorkerEnd> death;
};

struct Verdict {
  Status status;
  std::string evidence;
};

// How a worker ended on an item (a fatal error that is a lowering refusal is arch_absent; the rest are
// non-answers, or probe_error for a job the worker could not run).
Verdict classify_death(const WorkerEnd& end, int timeout_s);

// What one attempt says on its own (before baselines, the sweep or the object).
Verdict verdict_of(const Attempt& attempt, int timeout_s);

// Everything the probe learnt about one (key, target).
struct CellInputs {
  std::string key;
  std::string target;
  std::string declared_name;           // the name the entry declares (the cell's intrinsic when LLVM resolved none)
  std::optional<WorkerEnd> resolve_death;  // LLVM died reading the declaration
  Resolution resolution;               // what LLVM made of it otherwise
  bool target_known = true;            // this LLVM knows the processor
  std::string flavor_label;            // "LLVM 22.1.8", for evidence
  int timeout_s = 60;
  const Attempt* probe = nullptr;      // the probe kernel with the default immediate
  std::vector<int64_t> swept;          // immediates the sweep tried, in order
  std::optional<int64_t> sweep_value;  // the one that lowered ...
  const Attempt* sweep_attempt = nullptr;  // ... and its kernel
  const Attempt* baseline = nullptr;   // the probe's baseline kernel
  const Attempt* object = nullptr;     // the object of the kernel that lowered, where its assembly was rejected
};

Cell decide_cell(const CellInputs& in);

}  // namespace archdb
