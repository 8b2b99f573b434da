// probe/worker.h — the child side of a forked worker: runs jobs read from a pipe, one after another, and
// reports on another. Crashes, fatal errors and hangs of LLVM end the process after a last "die" report
// (see job.h); a lowering refusal does not (worker.cpp).
#pragma once

#include <map>
#include <string>

#include "probe/job.h"

namespace llvm {
class TargetMachine;
}

namespace archdb {

class Assembler;
class EncodingTable;

// What a compile job needs for its processor, built once in the parent and inherited through fork.
struct TargetResources {
  llvm::TargetMachine* machine = nullptr;
  const Assembler* assembler = nullptr;
  const EncodingTable* encodings = nullptr;  // every processor's: which real instructions an opcode has
};

// Never returns. Reads jobs from `in_fd` until it closes (or the worker retires, having abandoned enough
// unwound compiles), writes JSON lines to `out_fd`. `flavor_label` names this LLVM in evidence.
[[noreturn]] void run_worker(int in_fd, int out_fd, const std::map<std::string, TargetResources>& resources,
                             const std::string& flavor_label);

// Exit codes a worker uses for the ways it can end (the parent also reads the "die" line).
constexpr int kWorkerExitFatal = 70;
constexpr int kWorkerExitTimeout = 71;
constexpr int kWorkerExitJobError = 72;

}  // namespace archdb
