// probe/job.h — the messages between the parent and its workers, each with one encoder and one decoder.
//
// The parent hands a worker a Job as one line on its input pipe (encode_job / decode_job). The worker
// answers with Report lines on its output pipe (encode_report / decode_report): one per finished item, so
// whatever a worker finished before LLVM killed it is kept, then JobDone. Its last words, when LLVM crashes,
// fails fatally or hangs, are a LastWords report naming the function and the pass LLVM was in (from LLVM's
// pretty stack); signal handlers write them with encode_last_words, which allocates nothing, and the parent
// reads them with decode_report like any other report.
//
// Invariant: the wire format (JSON lines, field names) is known to this file alone; worker, pool and probe
// see only the structs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "db/column.h"
#include "probe/encodings.h"
#include "probe/resolve.h"
#include "schema/catalog.h"

namespace archdb {

struct JobItem {
  int id = 0;                // the parent's handle
  std::string function;      // compile: the kernel's name ("p12"), unique in the job
  std::string ir;            // compile: the kernel's IR text
  std::string declare_line;  // compile: the declaration it calls ("" for a baseline)
  DeclSpec spec;             // resolve: the declaration to resolve
};

struct Job {
  enum class Kind { kResolve, kCompile };
  Kind kind = Kind::kCompile;
  std::string target;            // compile: the processor
  std::vector<JobItem> items;
  int timeout_s = kDefaultTimeoutS;  // per item: a worker that makes no progress for this long is stopped
  // compile, per item: CPU time (user and system) codegen may spend on one kernel before it is a hang; 0: only
  // timeout_s. CPU time, not wall time: on a shared machine a kernel's wall time is other processes' too.
  int cpu_budget_ms = 0;
  std::string hang_function;     // test hook: this kernel never finishes (an injected hang)
  std::vector<int64_t> immarg_sweep;  // resolve: immediates to try where the verifier refuses 0
  bool recover_refusals = true;  // a lowering refusal is reported and the worker goes on (worker.cpp)
  // Kernels compiled straight to one ELF object by codegen's integrated assembler (no text): for kernels
  // whose printed assembly the MC assembler rejected, so that their object is still inspected.
  bool emit_object = false;
  // Codegen stopped at the end of instruction selection: each kernel's report lists the opcodes LLVM selected and
  // those with no encoding on the processor (encodings.h), for kernels LLVM crashed on after selecting them.
  // kAfterFinalize stops after finalize-isel (pseudo-instructions expanded), kBeforeFinalize just before it
  // (for kernels LLVM crashes on expanding them).
  enum class Selection { kNone, kAfterFinalize, kBeforeFinalize };
  Selection selection = Selection::kNone;
  // The worker ends after this job, so that the next one starts from the zygote's state: what LLVM does with
  // a kernel it crashes on can depend on what the process compiled before (a retry, a selection).
  bool retire_after = false;
};

std::string encode_job(const Job& job);  // one line, newline included
// Throws std::exception on a line that is not a job (the parent wrote it: a defect, not input).
Job decode_job(std::string_view line);

// ---- worker -> parent ----

// One compile item finished: codegen ran through it, or LLVM refused to lower it.
struct CompileReport {
  int id = -1;                        // -1: a function the job did not name
  std::string function;
  std::optional<std::string> refused;  // a lowering refusal (LLVM's fatal error message) unwound its codegen
  std::string refused_pass;            // the pass that refused
  std::optional<std::string> error;   // the first error diagnostic LLVM raised in this function
  std::vector<std::string> mnemonics;  // what codegen printed for it (assembly jobs)
  bool cross_checked = false;          // a probe kernel's printed assembly went through the MC assembler
  std::vector<std::string> mc_errors;  // ... and what the assembler rejected
  std::vector<std::string> undefined;  // undefined symbols its code refers to (assembled, or in the object)
  bool from_object = false;            // an object job's report: `undefined` comes from the ELF object
  std::string object_error;            // the object could not be read
  double cpu_ms = 0;                   // CPU time its codegen took (how close it came to its budget)
  std::vector<std::string> selected;   // selection jobs: the opcodes LLVM selected, in order (a multiset)
  std::vector<MissingEncoding> unencodable;  // ... those of them with no encoding on the processor
};

// One declaration resolved (what this LLVM makes of it).
struct ResolveReport {
  int id = -1;
  Resolution resolution;
};

// How a worker's job ended, as the parent saw it.
enum class EndKind {
  kCompleted,  // JobDone: every item reported
  kFatal,      // a fatal error LLVM raised that was not a recovered refusal
  kSignal,     // a crash signal (or out of memory)
  kTimeout,    // the wall-clock budget ran out: the worker's own alarm, or the parent's watchdog
  kCpuBudget,  // the CPU-time budget of one kernel's codegen ran out (Job::cpu_budget_ms)
  kExit,       // it exited with a nonzero status and no last words
  kRetired,    // it exited 0 before it started the job (the job is handed on untouched)
  kJobError,   // the job itself was malformed: a defect of the probe
};
std::string_view end_kind_name(EndKind k);

// A worker's last words: how it is about to end and where LLVM was.
struct LastWords {
  EndKind how = EndKind::kSignal;
  std::string function;  // the function LLVM was working on, if known
  std::string pass;      // the pass LLVM was in, if known
  std::string message;   // fatal message, signal name...
  int budget = 0;        // kTimeout: the budget in seconds; kCpuBudget: in milliseconds of CPU time
};

struct JobError {
  std::string message;
};

// An error diagnostic LLVM raised outside any function (the job then has to find its kernel).
struct UnattributedError {
  std::string message;
};

struct JobDone {};

using Report = std::variant<CompileReport, ResolveReport, LastWords, JobError, UnattributedError, JobDone>;

std::string encode_report(const Report& report);  // one line, newline included
// nullopt for a line that does not decode (a last word torn by the worker's death).
std::optional<Report> decode_report(std::string_view line);

// encode_report(LastWords{...}) into `buf` without allocating, for signal and fatal-error handlers. Returns the
// length written (the line is cut to fit `cap`, ending in a newline).
size_t encode_last_words(char* buf, size_t cap, EndKind how, const char* function, const char* pass,
                         const char* message, int budget = 0);

// How a worker ended a job.
struct WorkerEnd {
  EndKind how = EndKind::kCompleted;
  std::string function;            // the function LLVM was working on, if known
  std::string pass;                // the pass LLVM was in, if known
  std::string message;             // fatal message, signal name, assertion text...
  int budget = 0;                  // kTimeout: the budget that ran out, in s; kCpuBudget: in ms of CPU time
  std::string unattributed_error;  // a diagnostic error LLVM raised outside any function
  bool completed() const { return how == EndKind::kCompleted; }
};

}  // namespace archdb
