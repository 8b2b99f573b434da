// probe/frontend.h — measuring the front-end axis (db/frontend.h): does clang of the same flavor accept the
// builtin of a catalog key for a processor? Clang is run as a subprocess (no LLVM linked here), in the
// manner of a HIP device compile:
//   clang -x hip --cuda-device-only -nogpulib -nogpuinc --offload-arch=<processor> -S -emit-llvm -O0 -o - FILE
// -fsyntax-only is not enough: clang checks a builtin's target features while generating IR.
//
// The builtin of a key is found by naming convention (llvm.amdgcn.foo.bar <-> __builtin_amdgcn_foo_bar; where
// clang has only wave-size variants, __builtin_amdgcn_foo_bar_w32, else _w64) and confirmed by clang itself. Its parameter types are asked of clang, one argument at a time: an argument of
// an empty struct type makes clang name the type it wanted ("no viable conversion from 'Z' to 'T'"). Integer
// arguments clang requires to be constant are passed as literals (0, or the low end of the range clang
// names, or 1, 2, 4 together where clang refuses them otherwise); everything else is a parameter of the function around the call, so nothing is folded. Each
// builtin is posed in a function of its own, and clang's diagnostics are attributed by line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "db/frontend.h"

namespace archdb {

struct FrontendOptions {
  std::string flavor;
  std::string clang;                                      // the driver, e.g. "clang-22"
  std::vector<std::string> processors;
  std::vector<std::pair<std::string, std::string>> keys;  // (catalog key, the llvm.amdgcn.* intrinsic it poses)
  int jobs = 0;
  bool progress = false;
};

// The builtin a key's intrinsic would have by naming convention.
std::string builtin_for_intrinsic(const std::string& intrinsic);
// clang's version line ("Debian clang version 22.1.8 (...)"); throws usage_error if it does not run.
std::string clang_version_line(const std::string& clang);

Frontend measure_frontend(const FrontendOptions& options);

}  // namespace archdb
