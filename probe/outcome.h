// probe/outcome.h — what one attempt (a kernel compiled, or a worker's death on it) came to: a status and, as
// fields, what LLVM said — its cause, its words, the pass it was in, the undefined symbols, the budget that ran
// out. The evidence text is rendered from the fields once, by evidence(); nothing reads it back. Pure functions
// of typed reports, without LLVM and without processes (tests/outcome_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "db/column.h"
#include "probe/executor.h"
#include "probe/job.h"

namespace archdb {

struct Outcome {
  enum class Cause {
    kLowered,          // ok: codegen ran through the kernel
    kRefusal,          // arch_absent: a fatal error that is LLVM declining to lower (classify.h)
    kDiagnostic,       // arch_absent: an error LLVM raised through the context's diagnostic handler
    kUndefinedSymbol,  // arch_absent: the call became a call of a symbol nothing defines
    kFatalError,       // toolchain_crash: any other fatal error
    kCrash,            // toolchain_crash: a crash signal (or out of memory)
    kTimeout,          // toolchain_timeout: a budget ran out
    kWorkerEnded,      // toolchain_crash: the worker ended otherwise
    kJobRejected,      // probe_error: the probe module itself was rejected
    kNoReport,         // probe_error: nothing was reported
  };
  Status status = Status::kProbeError;
  Cause cause = Cause::kNoReport;
  std::string message;                 // LLVM's words (or the signal's name), cleaned (classify.h)
  std::string pass;                    // the pass LLVM was in, where known
  std::vector<std::string> undefined;  // kUndefinedSymbol
  int budget_s = 0;                    // kTimeout: the wall-clock budget, in seconds ...
  int cpu_budget_ms = 0;               // ... or the CPU budget, in ms, that ran out

  // The one rendering of the fields as a cell's evidence ("" for ok).
  std::string evidence() const;
  // The cell's cause, where this outcome decides a cell (kNone for ok and for what is never stored).
  archdb::Cause cell_cause() const;
  // The evidence with every immediate masked: equal for two attempts refused (or crashed) alike, whatever the
  // immediates they were posed with.
  std::string refusal_key() const;
  // A refusal about the intrinsic itself or the processor's features ("Cannot select: intrinsic %...", "requires
  // target feature", "not supported on this GPU"...): no posing of its operands or result makes a pattern appear.
  bool refuses_the_intrinsic() const;
  // LLVM crashed in instruction selection (SelectionDAG's or GlobalISel's), not after it.
  bool crashed_selecting() const;
};

// How a worker ended on an item: a fatal error that is a lowering refusal is arch_absent; the rest are
// non-answers, or probe_error for a job the worker could not run. `timeout_s` names a timeout whose budget the
// worker did not say.
Outcome outcome_of_death(const WorkerEnd& end, int timeout_s);

// What one attempt says on its own (before baselines, the sweep or the object).
Outcome outcome_of(const Attempt& attempt, int timeout_s);

}  // namespace archdb
