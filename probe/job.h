// probe/job.h — what the parent hands a worker and what the worker reports back.
//
// Jobs travel to a worker as one JSON line on its input pipe; results come back as JSON lines on its
// output pipe, one per finished item, so whatever a worker finished before LLVM killed it is kept. Its
// last words, when LLVM crashes, fails fatally or hangs, are a "die" line naming the function and the
// pass LLVM was in (from LLVM's pretty stack), written by the worker's handlers.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  int timeout_s = 60;            // per item: a worker that makes no progress for this long is stopped
  // compile, per item: CPU time (user and system) codegen may spend on one kernel before it is a hang; 0: only
  // timeout_s. CPU time, not wall time: on a shared machine a kernel's wall time is other processes' too.
  int cpu_budget_ms = 0;
  std::string hang_function;     // test hook: this kernel never finishes (an injected hang)
  std::vector<int64_t> immarg_sweep;  // resolve: immediates to try where the verifier refuses 0
  bool recover_refusals = true;  // a lowering refusal is reported and the worker goes on (worker.cpp)
  // Kernels compiled straight to one ELF object by codegen's integrated assembler (no text): for kernels
  // whose printed assembly the MC assembler rejected, so that their object is still inspected.
  bool emit_object = false;
};

nlohmann::json job_to_json(const Job& job);
Job job_from_json(const nlohmann::json& j);

// How a worker ended a job, as the parent saw it.
struct WorkerEnd {
  bool completed = false;          // sent "end": every item reported
  std::string how;                 // "fatal", "signal", "timeout", "killed", "exit", "job_error"
  std::string function;            // the function LLVM was working on, if known
  std::string pass;                // the pass LLVM was in, if known
  std::string message;             // fatal message, signal name, assertion text...
  std::string unattributed_error;  // a diagnostic error LLVM raised outside any function
};

}  // namespace archdb
