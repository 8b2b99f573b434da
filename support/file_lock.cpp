// support/file_lock.cpp — see file_lock.h.
#include "support/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace archdb {

FileLock::FileLock(const std::filesystem::path& path, const std::function<void(const std::string&)>& on_wait) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw input_error(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  int rc;
  while ((rc = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0 && errno == EWOULDBLOCK) {
    if (on_wait) {
      char buf[32] = {};
      ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
      std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      on_wait(holder);
    }
    while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
  }
  if (rc != 0) {
    int e = errno;
    ::close(fd_);
    throw input_error(path.string() + ": cannot lock: " + std::strerror(e));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace archdb
