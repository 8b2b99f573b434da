// support/error.h — the one error type archdb code throws for bad input and failed operations, and the
// process exit codes the CLI maps them to. Every message is one line naming the thing that is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace archdb {

// Process exit codes, documented in docs/cli.md and in `archdb --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitDifferent = 1,   // a check found differences: regen --check, coverage gate, compare
  kExitUsage = 2,       // bad command line: unknown flag, flavor, target or key
  kExitBadInput = 3,    // malformed catalog, corrupt data file, corrupt or foreign database, unusable path
  kExitProbeFailed = 4, // the probe could not measure: probe_error cells, wrong toolchain for the flavor
  kExitInternal = 5,    // anything else (I/O failure, unexpected state)
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Shorthands for the common categories.
inline Error usage_error(const std::string& m) { return Error(kExitUsage, m); }
inline Error input_error(const std::string& m) { return Error(kExitBadInput, m); }
inline Error internal_error(const std::string& m) { return Error(kExitInternal, m); }

}  // namespace archdb
