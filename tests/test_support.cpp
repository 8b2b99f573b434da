// tests/test_support.cpp — see test_support.h.
#include "test_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace archdb::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("archdb-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path source_dir() { return ARCHDB_SOURCE_DIR; }

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

RunResult run_archdb(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {ARCHDB_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  return run_command(argv_s);
}

RunResult run_command(const std::vector<std::string>& command) {
  TempDir io;
  fs::path out = io / "out", err = io / "err";
  RunResult r;
  r.exit_code = run_child(command, {{}, ChildStream::file(out.string()), ChildStream::file(err.string())});
  r.out = read(out);
  r.err = read(err);
  return r;
}

}  // namespace archdb::test
