// probe/probe.h — measuring a column: every catalog key on every target with this build's LLVM, in process.
//
// Phases, each compiled by an executor (executor.h: forked workers):
//   1. resolve: the flavor axis, one declaration at a time (resolve.h);
//   2. compile: per target, probe kernels in batches, codegen at O0 to assembly, each function cut out as it is
//      emitted, cross-checked by the MC assembler to an ELF object (worker.cpp);
//   3. retry: every non-answer (crash, timeout) is probed once more, alone (with the retry's CPU budget, where
//      one is set), and the baselines of the probes that lowered are compiled;
//   4. posings: a cell the default posing does not answer cleanly is posed again (posing_search.h);
//   5. objects: what the MC assembler rejected is compiled to an object, which decides;
// then each cell is decided from its attempts (decide.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/column.h"
#include "probe/executor.h"
#include "probe/resolve.h"
#include "schema/catalog.h"

namespace archdb {

struct ProbeOptions {
  std::string flavor;                  // the linked LLVM's flavor ("llvm22")
  std::vector<std::string> targets;    // processors to probe, in the wired order
  int jobs = 0;                        // workers at once; 0: as many CPUs as this process may use
  int timeout_s = kDefaultTimeoutS;    // per probe
  // CPU time a probe kernel's codegen may take before it is a toolchain_timeout (job.h), on the first
  // attempt and on the retry; 0: only timeout_s. The census sets them; a column keeps to timeout_s.
  int cpu_budget_ms = 0;
  int retry_cpu_budget_ms = 0;
  int retries = 1;                     // serial retries of each non-answer
  std::vector<int64_t> immarg_sweep = kDefaultImmargSweep;
  int batch_size = 12;                 // probe kernels per compile job (small: a refusal restarts the rest)
  std::string keep_ir_dir;             // if set, write <dir>/<key>.ll for every key's probe module (and
                                       // <key>.wave64.ll for a key's wave64 layout)
  std::string inject_hang_key;         // test hook: this key's probe kernel never finishes compiling
  bool inject_hang_first_attempt_only = false;  // test hook: ... on its first attempt (the retry answers)
  bool progress = false;               // a progress line on stderr
  // A lowering refusal (LLVM's report_fatal_error declining to select or lower a kernel) is an answer: by
  // default the worker reports it and goes on with its other kernels. Strict isolation ends the worker
  // on every fatal error instead; the column is the same, only slower.
  bool strict_isolation = false;
  // A call to measure exactly as posed (a check's, on demand): every key's probe kernel poses it so, and no
  // other posing is tried; nullopt: the default posing, then the posing search.
  std::optional<CallPosing> call;
  // Retry crashes on the parallel workers (each alone in its job) instead of one at a time; timeouts are
  // still retried one at a time with nothing else running. The answers are the same; the census uses it.
  bool parallel_crash_retries = false;
  // With parallel_crash_retries: retry timeouts on the parallel workers too (each alone in its job, one per
  // CPU) instead of one at a time. The census uses it: its budget is short and LLVM hangs are many.
  bool parallel_timeout_retries = false;
};

struct ProbeStats {
  int workers = 0;
  int jobs = 0;
  int worker_deaths = 0;
  int sweep_probes = 0;          // posing kernels beyond the default ones ...
  int posed_refused = 0;         // ... for refusals
  int posed_no_instruction = 0;  // ... for calls that became no instruction
  int posed_rejected = 0;        // ... for what the assembler rejected
  int posed_crashed = 0;         // ... for calls LLVM crashed on
  int retried = 0;
  double slowest_answer_cpu_ms = 0;  // the most CPU time a kernel that was answered took (its codegen)
  double seconds = 0;
  std::vector<std::pair<std::string, double>> phases;  // wall seconds of each phase, in order
};

struct ProbeResult {
  Column column;                          // sorted; may hold probe_error cells, which are never stored
  std::vector<std::string> probe_errors;  // "key/target: reason", one per probe_error cell
  ProbeStats stats;
};

// Measures `entries` (from `catalog`) on options.targets. Throws input_error for a malformed catalog entry
// (naming file and line), as LLVM judges it.
ProbeResult run_probe(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries,
                      const ProbeOptions& options);
// The same on an executor the caller holds (made by probe_executor for options.targets or more), so that several
// measurements share its workers (the census and its searches).
ProbeResult run_probe(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries,
                      const ProbeOptions& options, Executor& executor);
// The pool executor a measurement posed as `options` runs on, for `targets`.
std::unique_ptr<Executor> probe_executor(const ProbeOptions& options, const std::vector<std::string>& targets);

// Phase 1 alone, on forked workers: what this LLVM makes of each declaration (for declarations that are not
// a catalog's: the census's candidate instantiations). A declaration LLVM died on is a kProbeError outcome
// with `died` set. options.targets is ignored.
struct ResolveOutcome {
  Resolution resolution;
  bool died = false;
};
std::vector<ResolveOutcome> resolve_declarations(const std::vector<DeclSpec>& specs, const ProbeOptions& options);
std::vector<ResolveOutcome> resolve_declarations(const std::vector<DeclSpec>& specs, const ProbeOptions& options,
                                                 Executor& executor);

// Provenance of a column this build measures with `options` (counts left for Column::recount).
Provenance probe_provenance(const ProbeOptions& options);

}  // namespace archdb
