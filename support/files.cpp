// support/files.cpp — whole-file reads and crash-safe writes (see files.h).
#include "support/files.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace archdb {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw input_error(path.string() + ": read failed");
  return ss.str();
}

static void fsync_path(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomically(const fs::path& path, std::string_view contents) {
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw internal_error(path.string() + ": cannot create temporary file: " + std::strerror(errno));
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw internal_error(path.string() + ": write failed: " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw internal_error(path.string() + ": write failed: " + std::strerror(e));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw internal_error(path.string() + ": rename failed: " + std::strerror(e));
  }
  fsync_path(dir, O_RDONLY | O_DIRECTORY);
}

static fs::path backup_of(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + ".old");
}

void replace_directory(const fs::path& staged, const fs::path& target) {
  fs::path parent = target.parent_path();
  if (fs::exists(target)) {
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(staged);  // now holds the old contents
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

void recover_directory(const fs::path& target) {
  fs::path backup = backup_of(target);
  std::error_code ec;
  if (!fs::exists(target, ec) && fs::exists(backup, ec)) fs::rename(backup, target, ec);
  fs::remove_all(backup, ec);
  // Staging folders are named ".<flavor>.staged-*" by their writers.
  if (!fs::exists(target.parent_path(), ec)) return;
  std::string prefix = "." + target.filename().string() + ".staged-";
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(entry.path(), ec);
  }
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
