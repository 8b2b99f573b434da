// probe/frontend.h — measuring the front-end axis (db/frontend.h): does clang of the same flavor accept each of
// its amdgcn builtins for a processor, and which intrinsic calls does it make of it? Clang is run as a subprocess
// (no LLVM linked here), in the manner of a HIP device compile:
//   clang -x hip --cuda-device-only -nogpulib -nogpuinc --offload-arch=<processor> -S -emit-llvm -O0 -o - FILE
// -fsyntax-only is not enough: clang checks a builtin's target features while generating IR.
//
// Which builtins: every __builtin_amdgcn_* name held in clang's own files (the driver and the libclang-cpp beside
// it: the builtin table is compiled into them) that clang declares (a name it does not is dropped), and the
// naming convention's names for the catalog keys (llvm.amdgcn.foo.bar <-> __builtin_amdgcn_foo_bar, _w32, _w64).
// A catalog key's row is the first of those three clang declares that emits the key's own instantiation where
// it is accepted (ballot.i64's is _w64's), else the first clang declares; every other builtin is a row keyed by
// its own name.
//
// Each builtin's parameter types are asked of clang, one argument at a time: an argument of
// an empty struct type makes clang name the type it wanted ("no viable conversion from 'Z' to 'T'"). Integer
// arguments clang requires to be constant are passed as literals (0, or the low end of the range clang
// names, or 1, 2, 4 together where clang refuses them otherwise); everything else is a parameter of the function around the call, so nothing is folded. Each
// builtin is posed in a function of its own, and clang's diagnostics are attributed by line. The functions sit in
// one namespace: clang generates IR for a top-level declaration only while no error has occurred, and a
// namespace is one declaration, so one compile per processor names every builtin clang refuses there.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "db/frontend.h"

namespace archdb {

struct FrontendKeyRequest {
  std::string key;            // the catalog key
  std::string intrinsic;      // the llvm.amdgcn.* intrinsic it poses
  std::string instantiation;  // the name LLVM gives the call the key poses (mangled); empty: `intrinsic`
};

struct FrontendOptions {
  std::string flavor;
  std::string clang;  // the driver, e.g. "clang-22"
  std::vector<std::string> processors;
  std::vector<FrontendKeyRequest> keys;
  std::vector<std::string> builtins;  // builtin names to pose beside the keys' (clang_builtin_names)
  int jobs = 0;
  bool progress = false;
};

// The builtin a key's intrinsic would have by naming convention.
std::string builtin_for_intrinsic(const std::string& intrinsic);
// Every __builtin_amdgcn_* name in the files of `clang` (the driver, found in PATH, and the libclang-cpp beside it),
// sorted; throws usage_error when the driver cannot be found.
std::vector<std::string> clang_builtin_names(const std::string& clang);
// clang's version line ("Debian clang version 22.1.8 (...)"); throws usage_error if it does not run.
std::string clang_version_line(const std::string& clang);

Frontend measure_frontend(const FrontendOptions& options);

}  // namespace archdb
