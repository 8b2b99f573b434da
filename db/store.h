// db/store.h — the SQLite store: open (creating and migrating as needed), columns and their cells, and the
// record of runs. Every write is one transaction; a reader never sees half a column.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/column.h"
#include "support/file_lock.h"

struct sqlite3;

namespace archdb {

enum class Origin { kMeasured, kImported, kDescriptor };
std::string_view origin_name(Origin o);

struct FlavorRow {
  std::string name;
  Origin origin = Origin::kMeasured;
  std::string provenance;     // column.json text (or the imported file's provenance)
  std::string source_digest;  // of the data/ files (or imported file) last loaded
  std::optional<int64_t> run_id;
};

struct RunRow {
  int64_t id = 0;
  std::string flavor, kind, started_at, ended_at, outcome, toolchain, counts, message;
  int64_t pid = 0;
};

class Store {
 public:
  // Opens or creates the database at `path` and applies pending migrations. Throws input_error naming the
  // file if it is not an archdb database or is newer than this build. The full integrity check (PRAGMA
  // quick_check, which reads every page) runs before the first write of this connection — a migration, a
  // sync that loads a changed file, a run — so a corrupt file still fails before anything is written, while a
  // command that only reads does not pay for it (SQLite reports a corrupt page it reads as such: exit 3).
  static std::unique_ptr<Store> open(const std::filesystem::path& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const;

  std::vector<FlavorRow> flavors() const;
  std::optional<FlavorRow> flavor(const std::string& name) const;
  // The cells of one column, sorted; with provenance parsed for measured and descriptor columns.
  std::vector<Cell> cells(const std::string& flavor) const;
  std::vector<Cell> cells_for_key(const std::string& flavor, const std::string& key) const;

  // Replaces the column `name` (flavor row and all its cells) in one transaction.
  void replace_column(const std::string& name, Origin origin, const std::string& provenance,
                      const std::vector<Cell>& cells, const std::string& source_digest,
                      std::optional<int64_t> run_id);
  void remove_column(const std::string& name);

  // Runs. start_run commits at once (so an interrupted run leaves its trace); finish_measured_run stores
  // the column and closes the run in one transaction.
  int64_t start_run(const std::string& flavor, const std::string& kind, const std::string& toolchain_json);
  void finish_run(int64_t id, const std::string& outcome, const std::string& counts_json, const std::string& message);
  void finish_measured_run(int64_t id, const Column& column, const std::string& provenance_json,
                           const std::string& source_digest, const std::string& counts_json);
  // Runs left 'running' by a process that no longer exists become 'interrupted'.
  void mark_interrupted_runs();
  std::vector<RunRow> runs(int limit) const;

  // Internal: statement execution for this store's implementation files.
  sqlite3* handle() const { return db_; }
  // Internal: every writer calls this first (once per connection it runs the integrity check).
  void before_write();

 private:
  Store(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  void migrate();
  void check_header();
  void check_integrity();
  bool integrity_checked_ = false;
  void write_column_rows(const std::string& name, Origin origin, const std::string& provenance,
                         const std::vector<Cell>& cells, const std::string& source_digest,
                         std::optional<int64_t> run_id);

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

// Loads every committed column under data_root whose files changed since the store last saw them (by
// digest), and drops measured columns whose folder is gone. `except` names a flavor to leave alone (the
// one a regen is about to replace). Throws input_error naming the file on a corrupt column.
void sync_store_from_data(Store& store, const std::filesystem::path& data_root, const std::string& except = "");

// Held while a process opens a database (Store::open: a new file's switch to WAL and its migrations) and
// while it brings one up to date with data/: the processes that open one database at once
// (a parallel build's checks on a new database) sync one after another, and each finds the work of those
// before it done, instead of all loading every column in turn under SQLite's write lock until its busy
// timeout runs out. An flock on `<database>.sync-lock`; where that file cannot be made (a read-only folder)
// the sync goes on without it.
class SyncLock {
 public:
  explicit SyncLock(const std::filesystem::path& database);

 private:
  std::optional<FileLock> lock_;  // none where the lock file cannot be made
};

}  // namespace archdb
