// support/file_lock.h — an exclusive advisory lock (flock) on a file, held for the object's lifetime and
// released by the kernel when the process ends, however it ends. The holder writes its pid into the file so
// that a process that has to wait can say for whom.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace archdb {

class FileLock {
 public:
  // Takes the lock on `path` (created if missing), waiting as long as another process holds it; `on_wait`,
  // if given, is called once with the holder's pid ("" if unknown) before waiting. Throws input_error naming
  // the path when the file cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path,
                    const std::function<void(const std::string& holder)>& on_wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace archdb
