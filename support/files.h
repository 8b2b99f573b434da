// support/files.h — whole-file reads and crash-safe writes. A write either lands completely or not at all:
// data goes to a temporary file in the same directory, is fsynced, then renamed over the target.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace archdb {

// The most archdb reads of one file, and of one line of a line-oriented data file (cells.jsonl, census.txt,
// frontend.txt). Nothing archdb writes comes near either (the largest committed file is 5 MB, its longest line
// 21 KB); a file or line past them is refused in one line rather than read into memory.
constexpr size_t kMaxFileBytes = size_t{512} << 20;
constexpr size_t kMaxLineBytes = size_t{1} << 20;
// "a line of N bytes; archdb reads lines of at most 1 MiB" — the one wording, after a reader's "FILE:LINE: ".
std::string line_too_long(size_t bytes);

// Throws input_error naming the path when it cannot be read, is not a regular file (a directory, a pipe) or is
// larger than kMaxFileBytes.
std::string read_file(const std::filesystem::path& path);
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);
// The same without the fsyncs, for outputs a build may lose to a crash and make again (a build gate's answers):
// a reader still sees the old file or the whole new one, never a part.
void write_file_whole_unsynced(const std::filesystem::path& path, std::string_view contents);

// A folder of its own under the system's temporary directory ("<prefix>-XXXXXX"), removed with what it holds
// when this goes out of scope. Throws internal_error when it cannot be made.
class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Replaces directory `target` by directory `staged` in one step where the filesystem allows it
// (renameat2 RENAME_EXCHANGE), otherwise by two renames with a recoverable backup (see recover_directory).
// `staged` is consumed. Either the old or the new directory is visible at `target` after a crash.
void replace_directory(const std::filesystem::path& staged, const std::filesystem::path& target);

// Where this process stages a new `target` before replace_directory: ".<name>.staged-<pid>" beside it.
std::filesystem::path staging_dir_for(const std::filesystem::path& target);

// Finishes or undoes a replace_directory that a crash interrupted, in whatever process: the staging
// (".<name>.staged-<pid>") and backup (".<name>.old-<pid>") folders of writers that are gone are removed,
// a backup put back first if `target` is missing. Those of a writer still running are left alone.
void recover_directory(const std::filesystem::path& target);
// recover_directory for every folder of `parent` that has staging or backup folders beside it, present or
// not (a writer may have died with its old folder moved aside).
void recover_directories(const std::filesystem::path& parent);

// One line for a failed filesystem operation: "PATH: reason" (both paths of a rename or copy).
std::string describe(const std::filesystem::filesystem_error& e);

// FNV-1a 64-bit digest, hex: change detection for synced files, not security.
std::string digest_hex(std::string_view bytes);

}  // namespace archdb
