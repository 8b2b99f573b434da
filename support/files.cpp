// support/files.cpp — whole-file reads and crash-safe writes (see files.h).
#include "support/files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/error.h"

namespace archdb {
namespace fs = std::filesystem;

std::string line_too_long(size_t bytes) {
  return "a line of " + std::to_string(bytes) + " bytes; archdb reads lines of at most " +
         std::to_string(kMaxLineBytes >> 20) + " MiB";
}

std::string read_file(const fs::path& path) {
  // A directory opens and "reads" as empty through a stream; a FIFO or device may block or never end. Only
  // a regular file is a file to read here.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw input_error(path.string() + ": cannot read: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw input_error(path.string() + ": cannot read: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a pipe"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket"
                       : "not a file";
    throw input_error(path.string() + ": cannot read: " + what + ", not a regular file");
  }
  auto too_large = [&](size_t bytes) {
    ::close(fd);
    return input_error(path.string() + ": " + std::to_string(bytes) + " bytes; archdb reads files of at most " +
                       std::to_string(kMaxFileBytes >> 20) + " MiB");
  };
  if (static_cast<size_t>(st.st_size) > kMaxFileBytes) throw too_large(static_cast<size_t>(st.st_size));
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == out.size()) {  // the file may have grown since fstat
      if (got >= kMaxFileBytes) throw too_large(got);
      out.resize(out.size() + 65536);
    }
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw input_error(path.string() + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

static void fsync_path(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

namespace {
enum class Durability { kSynced, kRenamedOnly };

void write_file_whole(const fs::path& path, std::string_view contents, Durability durability) {
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw input_error(path.string() + ": cannot write: " + std::strerror(errno));
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw input_error(path.string() + ": write failed: " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if ((durability == Durability::kSynced && ::fsync(fd) != 0) || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw input_error(path.string() + ": write failed: " + std::strerror(e));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw input_error(path.string() + ": rename failed: " + std::strerror(e));
  }
  if (durability == Durability::kSynced) fsync_path(dir, O_RDONLY | O_DIRECTORY);
}
}  // namespace

void write_file_atomically(const fs::path& path, std::string_view contents) {
  write_file_whole(path, contents, Durability::kSynced);
}

void write_file_whole_unsynced(const fs::path& path, std::string_view contents) {
  write_file_whole(path, contents, Durability::kRenamedOnly);
}

TempFolder::TempFolder(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw internal_error("cannot create a temporary folder (" + tmpl + ")");
  path_ = tmpl;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// The folders a writer keeps beside `target` while it works carry its process id, so that a recovery in
// another process touches only those whose writer is gone.
static std::string owned_prefix(const fs::path& target, const char* kind) {
  return "." + target.filename().string() + "." + kind + "-";
}

fs::path staging_dir_for(const fs::path& target) {
  return target.parent_path() / (owned_prefix(target, "staged") + std::to_string(::getpid()));
}

static fs::path backup_of(const fs::path& target) {
  return target.parent_path() / (owned_prefix(target, "old") + std::to_string(::getpid()));
}

void replace_directory(const fs::path& staged, const fs::path& target) {
  fs::path parent = target.parent_path();
  if (fs::exists(target)) {
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      std::error_code ec;
      fs::remove_all(staged, ec);  // now holds the old contents
      fsync_path(parent, O_RDONLY | O_DIRECTORY);
      return;
    }
    // No atomic exchange here: keep the old folder as a backup until the new one is in place.
    fs::path backup = backup_of(target);
    fs::remove_all(backup);
    fs::rename(target, backup);
    fs::rename(staged, target);
    fsync_path(parent, O_RDONLY | O_DIRECTORY);
    fs::remove_all(backup);
    return;
  }
  fs::rename(staged, target);
  fsync_path(parent, O_RDONLY | O_DIRECTORY);
}

// The writer named by a ".<name>.<kind>-<pid>" folder: alive unless the pid is malformed or names no process.
static bool owner_alive(const std::string& pid_text) {
  if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

void recover_directory(const fs::path& target) {
  std::error_code ec;
  fs::path parent = target.parent_path();
  if (!fs::is_directory(parent, ec)) return;
  const std::string staged = owned_prefix(target, "staged"), backup = owned_prefix(target, "old");
  std::vector<fs::path> orphans;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    for (const std::string& prefix : {staged, backup})
      if (name.rfind(prefix, 0) == 0 && !owner_alive(name.substr(prefix.size()))) orphans.push_back(entry.path());
  }
  for (const auto& p : orphans) {
    // A writer that died between moving the old folder aside and putting the new one in place: the old
    // one goes back.
    if (p.filename().string().rfind(backup, 0) == 0 && !fs::exists(target, ec)) fs::rename(p, target, ec);
    fs::remove_all(p, ec);
  }
}

void recover_directories(const fs::path& parent) {
  std::error_code ec;
  std::vector<fs::path> targets;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() < 2 || name[0] != '.') continue;
    for (const char* kind : {".staged-", ".old-"}) {
      size_t at = name.rfind(kind);
      if (at != std::string::npos && at > 1) targets.push_back(parent / name.substr(1, at - 1));
    }
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  for (const auto& t : targets) recover_directory(t);
}

std::string describe(const fs::filesystem_error& e) {
  std::string where = e.path1().string();
  if (!e.path2().empty()) where += " -> " + e.path2().string();
  if (where.empty()) return e.what();
  return where + ": " + e.code().message();
}

std::string digest_hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace archdb
