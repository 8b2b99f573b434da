// db/file_stamps.cpp — see file_stamps.h.
#include "db/file_stamps.h"

#include <sys/stat.h>

#include <chrono>

#include "db/sqlite.h"
#include "db/store.h"
#include "support/error.h"

namespace archdb {

namespace {

int64_t ns_of(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

// A file changed this recently may change again within the same timestamp tick: its stamp is not trusted.
constexpr int64_t kSettledNs = 2'000'000'000;

}  // namespace

std::string stat_stamp(const std::vector<std::filesystem::path>& files) {
  std::string out;
  for (const auto& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) {
      out += "-\n";
      continue;
    }
    out += std::to_string(st.st_size) + " " + std::to_string(ns_of(st.st_mtim)) + " " + std::to_string(ns_of(st.st_ctim)) +
           " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_dev) + "\n";
  }
  return out;
}

std::string stamped_digest(Store& store, const std::string& key, const std::vector<std::filesystem::path>& files,
                           const std::function<std::string()>& compute) {
  const std::string before = stat_stamp(files);
  {
    Stmt q(store.handle(), "SELECT stamp, digest FROM file_stamp WHERE key = ?1");
    q.bind(1, key);
    if (q.step() && q.text(0) == before) return q.text(1);
  }
  std::string digest = compute();
  // Remember it only if nothing changed while reading and every file has settled.
  if (stat_stamp(files) != before) return digest;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) continue;
    if (now - std::max(ns_of(st.st_mtim), ns_of(st.st_ctim)) < kSettledNs) return digest;
  }
  store.before_write();  // a corrupt database fails here, as before any write
  try {
    Stmt up(store.handle(), "INSERT OR REPLACE INTO file_stamp(key, stamp, digest) VALUES (?1, ?2, ?3)");
    up.bind(1, key).bind(2, before).bind(3, digest).run();
  } catch (const Error&) {
    // A stamp only saves the next command some reading; a database that takes no write now still answers.
  }
  return digest;
}

}  // namespace archdb
