// support/files.cpp — whole-file reads and crash-safe writes (see files.h).
#include "support/files.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace archdb {
namespace fs = std::filesystem;

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
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == out.size()) out.resize(out.size() + 65536);  // the file may have grown since fstat
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
