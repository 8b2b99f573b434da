// service/snapshot.h — what the service answers from: an immutable in-memory copy of every column
// in the database, read in one SQLite read transaction, so a request sees each column whole — the one
// before a concurrent `regen` or the one after, never a mix; the census cells the checker falls back on are
// read in the same transaction. A watcher thread notices commits by other connections (PRAGMA data_version)
// and publishes a fresh snapshot; requests never touch SQLite.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/checker.h"
#include "db/column.h"
#include "db/search.h"
#include "db/store.h"
#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb::service {

// One column as the service shows it.
struct FlavorData {
  FlavorRow row;
  nlohmann::ordered_json provenance;          // column.json (or the imported file's provenance), parsed
  std::optional<RunRow> run;                  // the run that measured it, where the database has it
  std::vector<Cell> cells;                    // sorted by (key, target)
  std::vector<std::string> keys;              // sorted, unique
  std::vector<std::string> targets;           // wired order, then any other target the column holds
  std::map<std::string, int> counts;          // status name -> cells
  ColumnIndex index;                          // for the checker, with the flavor's census (empty for imported
                                              // columns: never evidence)

  const Cell* find(const std::string& key, const std::string& target) const;
  // The cells of one key (a contiguous run of `cells`), empty if none.
  std::pair<const Cell*, const Cell*> key_cells(const std::string& key) const;
};

struct Snapshot {
  uint64_t generation = 0;         // 1 for the first snapshot of this process, then +1 per reload
  std::string etag;                // a digest of everything loaded: equal content, equal tag
  std::string loaded_at;           // UTC, ISO 8601
  double load_ms = 0;              // how long reading it took
  std::vector<std::shared_ptr<const FlavorData>> flavors;  // by LLVM major, imported ones last
  std::shared_ptr<const NameIndex> names;  // every name of the catalog, columns, censuses and front ends (search)

  const FlavorData* flavor(const std::string& name) const;
  std::vector<std::string> flavor_names() const;
};

// The process-wide read-only view of the catalog and targets (files read once at start-up).
struct Schema {
  Catalog catalog;
  TargetList targets;
};

// Reads one snapshot from `store` in a single read transaction. What has not changed since `previous` (a
// census with the same stored digest) is shared with it rather than read again.
std::shared_ptr<const Snapshot> load_snapshot(Store& store, const Schema& schema, uint64_t generation,
                                              const std::shared_ptr<const Snapshot>& previous);

// Owns the store connection (used by its watcher thread only) and the current snapshot.
class SnapshotSource {
 public:
  // Loads the first snapshot at once (throws on a database that cannot be read); then `start()` begins
  // watching, every `poll_ms`.
  SnapshotSource(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, int poll_ms = 50);
  ~SnapshotSource();

  void start();
  void stop();
  std::shared_ptr<const Snapshot> current() const;
  // Reloads now if the database changed since the last snapshot; true if a new snapshot was published.
  bool refresh();
  std::string last_error() const;  // the last reload failure, if the latest attempt failed

 private:
  int64_t data_version();

  std::unique_ptr<Store> store_;
  std::shared_ptr<const Schema> schema_;
  int poll_ms_;
  mutable std::mutex mutex_;  // guards current_ and last_error_
  std::shared_ptr<const Snapshot> current_;
  std::string last_error_;
  std::mutex store_mutex_;    // the connection is used by one thread at a time
  int64_t seen_version_ = -1;
  std::thread watcher_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace archdb::service
