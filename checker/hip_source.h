// checker/hip_source.h — a kernel's HIP source asked of the flavor's clang for one target, as a build compiles its
// device code: the device IR clang makes, or the builtins clang refuses there, in its words. `archdb check K.hip`
// checks that IR (the back end's half) after clang's answer (the front end's half).
//
// Invariants: clang runs as a child process (support/spawn.h), its output and diagnostics in a folder of its own
// that is removed after; nothing of clang's runs in ours. A refusal is read from clang's own diagnostic for a
// builtin ("'__builtin_amdgcn_X' needs target feature F", "use of undeclared identifier '__builtin_amdgcn_X'");
// any other error is the source's, an input_error naming the file with clang's first error. clang stops generating
// a function at its first refused builtin, so a kernel's refusals are those clang reports, at least one.
#pragma once

#include <string>
#include <vector>

#include "checker/checker.h"

namespace archdb {

// A source file a check compiles with clang rather than reads as IR (.hip, .cu, .cpp, .cc, .cxx).
bool is_hip_source(const std::string& path);

// The clang that compiles device code for `flavor`: `compiler` when given, else clang-<major> where PATH has it;
// empty when it is not installed.
std::string clang_for_flavor(const std::string& flavor, const std::string& compiler);

// How the device code of `source` is compiled for `target` (a processor, or one with +wavefrontsize64: clang's
// -mwavefrontsize64), to LLVM IR text at `out`, as the build gate compiles it (-O3). Throws usage_error for a
// feature clang has no flag for.
std::vector<std::string> hip_device_command(const std::string& clang, const std::string& target, const std::string& source,
                                            const std::string& out, const std::vector<std::string>& extra_args);

struct HipCompile {
  std::string ir;                        // the device IR, when clang made it
  std::vector<BuiltinRefusal> refused;   // the builtins clang refused for the target (then no IR)
};

// Compiles `source` for `target`; throws input_error naming the file for an error that refuses no builtin (a broken
// source, a missing header) or a clang that crashed.
HipCompile compile_hip(const std::string& clang, const std::string& source, const std::string& target,
                       const std::vector<std::string>& extra_args);

// The builtin refusals among clang's diagnostics (each builtin once, in clang's order).
std::vector<BuiltinRefusal> builtin_refusals(const std::string& clang_stderr);

// The __builtin_amdgcn_* names a source mentions, sorted, each once: what is asked of the committed front-end axis
// where the flavor's clang is not installed.
std::vector<std::string> builtins_named(const std::string& source_text);

}  // namespace archdb
