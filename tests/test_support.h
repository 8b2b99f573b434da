// tests/test_support.h — what the suites share: temporary folders, running the real `archdb` binary, the
// checkout's paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace archdb::test
