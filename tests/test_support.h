// tests/test_support.h — what the suites share: temporary folders, running the real `archdb` binary, the
// checkout's paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/spawn.h"

namespace archdb::test {

// A fresh folder under the system temporary directory, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs build/archdb with `args`, waits, captures both streams.
RunResult run_archdb(const std::vector<std::string>& args);
// Runs argv[0] (a path) with its arguments, waits, captures both streams.
RunResult run_command(const std::vector<std::string>& argv);

std::filesystem::path source_dir();
std::string read(const std::filesystem::path& p);
void write(const std::filesystem::path& p, const std::string& text);

// A small, valid rocke-v1 column (one key on two arches): the peer's own files are not in a checkout.
inline constexpr const char* kSmallRockeColumn = R"({"schema": "rocke.intrinsic_arch_domain/v1",
    "toolchain": {"flavor": "llvm22", "arches": ["gfx90a", "gfx942"]},
    "keys": {"a.b": {"gfx90a": {"status": "ok", "verified_on": "llvm22"},
                     "gfx942": {"status": "arch_absent", "verified_on": "llvm22", "evidence": "Cannot select"}}},
    "canonical": {"a.b": "llvm.amdgcn.a.b"}})";

}  // namespace archdb::test
