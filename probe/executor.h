// probe/executor.h — compiling probe kernels and resolving declarations, behind one interface, in the manner of
// llvm-exegesis's executors: the measuring phases (probe.cpp) and the census's searches (census.cpp) say what to
// compile and how, and read back one Attempt per kernel; how it is run is the executor's.
//
// PoolExecutor runs everything on forked workers (pool.h, worker.h): target machines and assemblers are built
// once, in this process, before the zygote forks; a parallel pool takes batches, a serial pool takes one kernel
// at a time with a warm spare per CPU. A worker LLVM kills is replaced and its batch goes on without the kernel
// that killed it (found from its last words, else by halving the batch).
//
// Invariants: every kernel handed to compile() comes back with exactly one Attempt (a report, or a death
// attributed to it); every declaration handed to resolve() with one ResolveAttempt. A kernel's IR is dropped
// once it is answered. A test executor (tests/scripted_executor.h) answers from a script, without LLVM.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

// One declaration read by LLVM: what it made of it, or how the worker died on it.
struct ResolveAttempt {
  std::optional<Resolution> resolution;
  std::optional<WorkerEnd> death;
};

// A kernel to compile: its function (unique per target within one compile call), its IR, and the declaration
// it calls ("" for a baseline, which calls nothing).
struct Kernel {
  std::string target;
  std::string function;
  std::string ir;
  std::string declare_line;
};

// How a set of kernels is compiled.
struct CompileHow {
  bool serial = false;       // one at a time, with nothing else on the serial lane
  size_t batch = 12;         // kernels per job (1: each alone)
  bool retry = false;        // a retry: the retry's CPU budget, and a first-attempt-only injected hang is off
  bool emit_object = false;  // written straight to one ELF object (kernels whose assembly was rejected)
  Job::Selection selection = Job::Selection::kNone;  // codegen stops at the end of instruction selection (job.h)
  // Each job in a worker that has compiled nothing before (a retry, a selection): what LLVM does with a kernel
  // it crashes on can depend on what the process did before, and an answer must not.
  bool fresh = false;
};

// Kernels and how to compile them; the runs handed to one compile() call go at once.
struct CompileRun {
  std::vector<Kernel> kernels;
  CompileHow how;
};

struct ExecutorOptions {
  std::vector<std::string> targets;  // every target a kernel may name (processors LLVM knows, with features)
  int jobs = 0;                      // parallel workers; 0: as many CPUs as this process may use
  int timeout_s = kDefaultTimeoutS;  // wall-clock budget of one kernel (or declaration)
  int cpu_budget_ms = 0;             // CPU budget of one kernel's codegen (0: only timeout_s) ...
  int retry_cpu_budget_ms = 0;       // ... and of a retry's
  std::vector<int64_t> immarg_sweep; // resolving: the immediates tried where the verifier refuses 0
  bool strict_isolation = false;     // every fatal error ends its worker (docs/measuring.md "How the probe measures")
  std::string hang_function;         // test hook: this kernel never finishes compiling ...
  bool hang_first_attempt_only = false;  // ... unless it is a retry
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual int workers() const = 0;
  // Compiles every run's kernels as its `how` says, the runs at once. Returns, per run, one Attempt per kernel,
  // in order.
  virtual std::vector<std::vector<Attempt>> compile(std::vector<CompileRun> runs) = 0;
  // Reads each declaration with LLVM: spread over the parallel workers, or `serial`, each alone in a fresh worker.
  virtual std::vector<ResolveAttempt> resolve(const std::vector<DeclSpec>& specs, bool serial) = 0;

  // A processor on which LLVM's own assembler rejects the code LLVM writes for any kernel (the assembler's words
  // and the instruction), found once when the executor is made; "" for a processor without such a defect.
  virtual std::string target_defect(const std::string& target) const = 0;
  // The processor's assembler refusing a bare mnemonic as another processor's ("instruction not supported on this
  // GPU"), asked of LLVM's tables in this process (encodings.h); "" where it has the mnemonic or does not say.
  virtual std::string mnemonic_refusal(const std::string& target, const std::string& mnemonic) = 0;

  // Counters since construction: jobs handed out, workers that died.
  int jobs() const { return jobs_; }
  int worker_deaths() const { return worker_deaths_; }
  // Called now and then while work runs: kernels (or declarations) answered, and planned, in this call.
  void set_progress(std::function<void(int done, int planned)> progress) { progress_ = std::move(progress); }

 protected:
  int jobs_ = 0;
  int worker_deaths_ = 0;
  std::function<void(int, int)> progress_;
};

// The executor of forked workers. Builds the target machines and forks the zygote in its constructor; throws
// internal_error when LLVM cannot make a target machine for a target.
std::unique_ptr<Executor> make_pool_executor(const ExecutorOptions& options);

}  // namespace archdb
