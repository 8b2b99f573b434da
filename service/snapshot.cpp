// service/snapshot.cpp — see snapshot.h.
#include "service/snapshot.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

#include "db/history.h"
#include "db/sqlite.h"
#include "support/clock.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::service {

namespace {

void fingerprint_cell(std::string& out, const Cell& c) {
  out += c.key;
  out += '\x1f';
  out += c.target;
  out += '\x1f';
  out += status_name(c.status);
  out += '\x1f';
  out += c.intrinsic;
  out += '\x1f';
  out += c.evidence;
  out += '\x1f';
  for (const auto& m : c.lowered_to) out += m + ' ';
  out += '\x1f';
  if (c.posed) out += posing_to_json(*c.posed).dump();
  out += '\x1f';
  out += std::string(cause_name(c.cause));
  out += '\x1f';
  out += c.mc_check;
  out += '\x1f';
  out += c.note;
  out += '\x1f';
  if (c.declared) out += declared_to_json(*c.declared).dump();
  out += '\n';
}

}  // namespace

const Cell* FlavorData::find(const std::string& key, const std::string& target) const {
  auto before = [&](const Cell& c) {
    int k = c.key.compare(key);
    return k < 0 || (k == 0 && c.target < target);
  };
  auto it = std::partition_point(cells.begin(), cells.end(), before);
  if (it == cells.end() || it->key != key || it->target != target) return nullptr;
  return &*it;
}

std::pair<const Cell*, const Cell*> FlavorData::key_cells(const std::string& key) const {
  auto lo = std::lower_bound(cells.begin(), cells.end(), key, [](const Cell& c, const std::string& k) { return c.key < k; });
  auto hi = std::upper_bound(lo, cells.end(), key, [](const std::string& k, const Cell& c) { return k < c.key; });
  if (lo == hi) return {nullptr, nullptr};
  return {&*lo, &*lo + (hi - lo)};
}

const FlavorData* Snapshot::flavor(const std::string& name) const {
  for (const auto& f : flavors)
    if (f->row.name == name) return f.get();
  return nullptr;
}

std::vector<std::string> Snapshot::flavor_names() const {
  std::vector<std::string> out;
  for (const auto& f : flavors) out.push_back(f->row.name);
  return out;
}

std::shared_ptr<const Snapshot> load_snapshot(Store& store, const Schema& schema, uint64_t generation,
                                              const std::shared_ptr<const Snapshot>& previous) {
  const auto start = std::chrono::steady_clock::now();
  auto snap = std::make_shared<Snapshot>();
  snap->generation = generation;
  snap->loaded_at = utc_now();
  std::string fingerprint;

  Transaction tx(store.handle(), "BEGIN");  // every SELECT below sees the database as of its first read
  std::vector<FlavorRow> rows = store.flavors();
  std::map<int64_t, RunRow> runs;
  bool any_run = std::any_of(rows.begin(), rows.end(), [](const FlavorRow& r) { return r.run_id.has_value(); });
  if (any_run)
    for (auto& r : store.runs(1 << 30)) runs.emplace(r.id, std::move(r));
  std::sort(rows.begin(), rows.end(), [](const FlavorRow& a, const FlavorRow& b) { return flavor_before(a.name, b.name); });
  for (auto& row : rows) {
    auto fd = std::make_shared<FlavorData>();
    fd->cells = store.cells(row.name);
    fd->index = ColumnIndex::load(store, row.name);
    // The census goes into the snapshot with its column: a request never looks anything up in SQLite.
    fd->index.census_store = nullptr;
    if (fd->index.has_cells) {
      std::shared_ptr<const CensusIndex> before;
      if (previous)
        if (const FlavorData* f = previous->flavor(row.name)) before = f->index.census;
      fd->index.census = CensusIndex::load(store, row.name, before);
      const CensusIndex& census = *fd->index.census;
      fingerprint += "census " + census.source_digest + '\n';
      if (census.source_digest.empty())
        for (const auto& [name, groups] : census.by_name)
          for (const auto& g : groups) {
            fingerprint += name + '\x1e';
            fingerprint_cell(fingerprint, g.cell);
            fingerprint += g.lowered_to;
            for (uint16_t t : g.targets) fingerprint += census.processors[t] + ',';
            fingerprint += '\n';
          }
      // Cells earlier checks measured on demand answer here as on the command line (which stores them).
      auto on_demand = std::make_shared<OnDemandCells>(load_on_demand_cells(store, row.name));
      for (const auto& [at, c] : on_demand->cells) {
        fingerprint += "on demand " + std::get<2>(at) + '\x1e';
        fingerprint_cell(fingerprint, c);
      }
      fd->index.on_demand = std::move(on_demand);
    }
    fd->provenance = nlohmann::ordered_json::parse(row.provenance, nullptr, /*allow_exceptions=*/false);
    if (fd->provenance.is_discarded()) fd->provenance = row.provenance;
    if (row.run_id) {
      auto it = runs.find(*row.run_id);
      if (it != runs.end()) fd->run = it->second;
    }
    fingerprint += row.name + '\x1e' + std::string(origin_name(row.origin)) + '\x1e' + row.provenance + '\x1e' +
                   row.source_digest + '\x1e' + (row.run_id ? std::to_string(*row.run_id) : "") + '\n';
    std::set<std::string> extra_targets;
    for (const Cell& c : fd->cells) {
      fingerprint_cell(fingerprint, c);
      if (fd->keys.empty() || fd->keys.back() != c.key) fd->keys.push_back(c.key);
      ++fd->counts[std::string(status_name(c.status))];
      if (!schema.targets.contains(c.target)) extra_targets.insert(c.target);
    }
    std::set<std::string> present;
    for (const Cell& c : fd->cells) present.insert(c.target);
    for (const auto& t : schema.targets.names)
      if (present.count(t)) fd->targets.push_back(t);
    fd->targets.insert(fd->targets.end(), extra_targets.begin(), extra_targets.end());
    fd->row = std::move(row);
    snap->flavors.push_back(std::move(fd));
  }
  snap->names = std::make_shared<const NameIndex>(NameIndex::build(schema.catalog, store));
  tx.commit();
  snap->etag = "W/\"" + digest_hex(fingerprint) + "\"";
  snap->load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return snap;
}

SnapshotSource::SnapshotSource(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, int poll_ms)
    : store_(std::move(store)), schema_(std::move(schema)), poll_ms_(poll_ms) {
  // Read-only from here on: this connection refuses any write.
  exec(store_->handle(), "PRAGMA query_only = 1");
  seen_version_ = data_version();
  current_ = load_snapshot(*store_, *schema_, 1, nullptr);
}

SnapshotSource::~SnapshotSource() { stop(); }

int64_t SnapshotSource::data_version() {
  Stmt version(store_->handle(), "PRAGMA data_version");
  return version.step() ? version.integer(0) : -1;
}

std::shared_ptr<const Snapshot> SnapshotSource::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

std::string SnapshotSource::last_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_error_;
}

bool SnapshotSource::refresh() {
  std::lock_guard<std::mutex> store_lock(store_mutex_);
  try {
    int64_t v = data_version();
    if (v == seen_version_) return false;
    uint64_t generation = current()->generation + 1;
    auto snap = load_snapshot(*store_, *schema_, generation, current());
    seen_version_ = v;
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::move(snap);
    last_error_.clear();
    return true;
  } catch (const std::exception& e) {
    // Keep serving the last whole snapshot; say why it is not newer (on stderr as it is; in /v1/status with
    // the database named by its file name: a response shows no path of this machine).
    std::string why = e.what();
    const std::string full = store_->path().string(), shown = store_->path().filename().string();
    for (size_t at; !full.empty() && (at = why.find(full)) != std::string::npos;) why.replace(at, full.size(), shown);
    std::lock_guard<std::mutex> lock(mutex_);
    if (last_error_ != why) std::fprintf(stderr, "archdb serve: cannot reload the database: %s\n", e.what());
    last_error_ = why;
    return false;
  }
}

void SnapshotSource::start() {
  if (watcher_.joinable()) return;
  watcher_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    while (!stopping_) {
      stop_cv_.wait_for(lock, std::chrono::milliseconds(poll_ms_), [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      refresh();
      lock.lock();
    }
  });
}

void SnapshotSource::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace archdb::service
