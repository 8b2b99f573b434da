// db/store.cpp — the SQLite store (see store.h). Invariants on the data are stated in the schema
// (schema/migrations/); this file keeps the ones about transactions: every public write is one
// BEGIN IMMEDIATE ... COMMIT, rolled back on any error.
#include "db/store.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "db/column_files.h"
#include "db/file_stamps.h"
#include "db/sqlite.h"
#include "schema/migrations.h"
#include "support/files.h"
#include "support/clock.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb {
namespace fs = std::filesystem;

namespace {

constexpr int kApplicationId = 0x61726462;  // "ardb"

Origin parse_origin(const std::string& s) {
  if (s == "imported") return Origin::kImported;
  if (s == "descriptor") return Origin::kDescriptor;
  return Origin::kMeasured;
}

Cell read_cell(const Stmt& q) {
  Cell c;
  c.key = q.text(0);
  c.target = q.text(1);
  c.status = parse_status(q.text(2)).value_or(Status::kProbeError);
  c.intrinsic = q.text(3);
  c.evidence = q.text(4);
  if (!q.is_null(5)) {
    c.lowered_to = stored_string_list(q.db(), q.text(5));
  }
  c.mc_check = q.text(6);
  c.note = q.text(7);
  if (!q.is_null(8)) c.cause = parse_cause(q.text(8)).value_or(Cause::kNone);
  if (!q.is_null(9)) {
    nlohmann::json posed = stored_json(q.db(), q.text(9));
    try {
      c.posed = posing_from_json(posed);
    } catch (const std::invalid_argument& e) {
      throw input_error(database_file(q.db()) + ": the database holds " + posed.dump() + " where a posing belongs (" +
                        e.what() + ")");
    }
  }
  if (!q.is_null(10)) {
    nlohmann::json declared = stored_json(q.db(), q.text(10));
    try {
      c.declared = declared_from_json(declared);
    } catch (const std::invalid_argument& e) {
      throw input_error(database_file(q.db()) + ": the database holds " + declared.dump() +
                        " where LLVM's declaration belongs (" + e.what() + ")");
    }
  }
  return c;
}

constexpr const char* kCellColumns =
    "decl_key, target, status, intrinsic, evidence, lowered_to, mc_check, note, cause, posed, declared";

}  // namespace

std::string_view origin_name(Origin o) {
  switch (o) {
    case Origin::kMeasured: return "measured";
    case Origin::kImported: return "imported";
    case Origin::kDescriptor: return "descriptor";
  }
  return "?";
}

std::unique_ptr<Store> Store::open(const fs::path& path) {
  std::error_code ec;
  // A folder named for the database is not made here (a mistyped --db would leave folders behind): it must exist.
  if (path.has_parent_path() && !fs::is_directory(path.parent_path(), ec))
    throw input_error(path.string() + ": cannot open the database: the folder " + path.parent_path().string() +
                      " does not exist");
  // A database is a regular file (or none yet): a device, a folder or a pipe is refused by its given name.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    throw input_error(path.string() + ": cannot use this as a database: not a regular file");
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw input_error(path.string() + ": cannot open database: " + msg);
  }
  std::unique_ptr<Store> store(new Store(path, db));
  sqlite3_busy_timeout(db, 10000);
  sqlite3_extended_result_codes(db, 0);
  // Processes opening a new database at once (a parallel build's first checks) take turns: switching a
  // new file to WAL fails with SQLITE_BUSY, busy timeout or not, while another connection reads it.
  SyncLock opening(path);
  store->check_header();
  exec(db, "PRAGMA journal_mode=WAL");
  exec(db, "PRAGMA synchronous=NORMAL");
  exec(db, "PRAGMA foreign_keys=ON");
  store->migrate();
  return store;
}

Store::~Store() { sqlite3_close(db_); }

void Store::check_header() {
  // The first pages only: a foreign or non-database file fails here, before anything is written.
  int64_t app_id = 0, version = 0, n = 0;
  try {
    Stmt app(db_, "PRAGMA application_id");
    app.step();
    app_id = app.integer(0);
    Stmt ver(db_, "PRAGMA user_version");
    ver.step();
    version = ver.integer(0);
    Stmt tables(db_, "SELECT count(*) FROM sqlite_schema");
    tables.step();
    n = tables.integer(0);
  } catch (const Error& e) {
    if (e.code() == kExitBadInput) throw;
    throw input_error(path_.string() + ": not a usable archdb database (" + e.what() + ")");
  }
  if ((version > 0 || n > 0) && app_id != kApplicationId)
    throw input_error(path_.string() + ": not an archdb database (a SQLite file of another application)");
}

void Store::check_integrity() {
  // quick_check reads every page: a corrupt file fails here, before anything is written. A file
  // whose first page is damaged fails already when the check is prepared (SQLite reads the schema then).
  // It may report problems and then fail itself on the next page it cannot read: the report names them.
  std::string report;
  try {
    Stmt check(db_, "PRAGMA quick_check");
    while (check.step()) report += check.text(0) + "\n";
  } catch (const Error& e) {
    if (report.empty() && e.code() == kExitBadInput) throw;
    if (report.empty()) throw input_error(path_.string() + ": not a usable archdb database (" + e.what() + ")");
  }
  // One row per problem, or one row holding them all a line each, under a "*** in database main ***" head.
  std::vector<std::string> problems;
  for (const auto& line : split(report, '\n'))
    if (!line.empty() && line.rfind("*** ", 0) != 0) problems.push_back(line);
  if (problems.size() != 1 || problems.front() != "ok") {
    std::string first = problems.empty() ? "no answer from the integrity check" : problems.front();
    std::string more = problems.size() <= 1 ? "" : problems.size() >= 100 ? "; 100 or more problems in all"
                                                                         : "; " + std::to_string(problems.size()) + " problems in all";
    throw input_error(path_.string() + ": database is corrupt (" + first + more + ")");
  }
  integrity_checked_ = true;
}

void Store::before_write() {
  if (!integrity_checked_) check_integrity();
}

int Store::schema_version() const {
  Stmt ver(db_, "PRAGMA user_version");
  ver.step();
  return static_cast<int>(ver.integer(0));
}

void Store::migrate() {
  const auto& migrations = schema_migrations();
  int version = schema_version();
  int latest = migrations.empty() ? 0 : migrations.back().version;
  if (version > latest)
    throw input_error(path_.string() + ": database schema version " + std::to_string(version) +
                      " is newer than this archdb understands (" + std::to_string(latest) + ")");
  for (const auto& m : migrations) {
    if (m.version <= version) continue;
    before_write();
    // Several processes may open a new database at once (a parallel build's checks): each migration runs
    // under the write lock and only if, holding it, the database still lacks it.
    Transaction tx(db_);
    if (schema_version() >= m.version) continue;
    exec(db_, std::string(m.sql));
    exec(db_, "PRAGMA user_version=" + std::to_string(m.version));
    exec(db_, "PRAGMA application_id=" + std::to_string(kApplicationId));
    tx.commit();
  }
}

std::vector<FlavorRow> Store::flavors() const {
  std::vector<FlavorRow> out;
  Stmt q(db_, "SELECT name, origin, provenance, source_digest, run_id FROM flavor ORDER BY name");
  while (q.step()) {
    FlavorRow r;
    r.name = q.text(0);
    r.origin = parse_origin(q.text(1));
    r.provenance = q.text(2);
    r.source_digest = q.text(3);
    if (!q.is_null(4)) r.run_id = q.integer(4);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<FlavorRow> Store::flavor(const std::string& name) const {
  for (auto& r : flavors())
    if (r.name == name) return r;
  return std::nullopt;
}

std::vector<Cell> Store::cells(const std::string& flavor) const {
  std::vector<Cell> out;
  Stmt q(db_, (std::string("SELECT ") + kCellColumns + " FROM cell WHERE flavor = ?1 ORDER BY decl_key, target").c_str());
  q.bind(1, flavor);
  while (q.step()) out.push_back(read_cell(q));
  return out;
}

std::vector<Cell> Store::cells_for_key(const std::string& flavor, const std::string& key) const {
  std::vector<Cell> out;
  Stmt q(db_, (std::string("SELECT ") + kCellColumns +
               " FROM cell WHERE flavor = ?1 AND decl_key = ?2 ORDER BY target").c_str());
  q.bind(1, flavor).bind(2, key);
  while (q.step()) out.push_back(read_cell(q));
  return out;
}

void Store::write_column_rows(const std::string& name, Origin origin, const std::string& provenance,
                              const std::vector<Cell>& cells, const std::string& source_digest,
                              std::optional<int64_t> run_id) {
  Stmt del(db_, "DELETE FROM flavor WHERE name = ?1");
  del.bind(1, name).run();
  Stmt ins(db_, "INSERT INTO flavor(name, origin, provenance, source_digest, run_id) VALUES (?1, ?2, ?3, ?4, ?5)");
  ins.bind(1, name).bind(2, std::string(origin_name(origin))).bind(3, provenance).bind_or_null(4, source_digest);
  ins.bind(5, run_id).run();
  Stmt key(db_, "INSERT OR IGNORE INTO decl_key(name) VALUES (?1)");
  Stmt target(db_, "INSERT OR IGNORE INTO target(name) VALUES (?1)");
  Stmt cell(db_,
            "INSERT INTO cell(flavor, decl_key, target, status, intrinsic, evidence, lowered_to, mc_check, note, cause, posed, "
            "declared) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  for (const auto& c : cells) {
    if (c.status == Status::kProbeError)
      throw internal_error("refusing to store a probe_error cell (" + c.key + "/" + c.target + ")");
    key.bind(1, c.key).run();
    target.bind(1, c.target).run();
    cell.bind(1, name).bind(2, c.key).bind(3, c.target).bind(4, std::string(status_name(c.status)));
    cell.bind(5, c.intrinsic).bind_or_null(6, c.evidence);
    if (c.status == Status::kOk && origin != Origin::kImported)
      cell.bind(7, nlohmann::json(c.lowered_to).dump());
    else
      cell.bind_or_null(7, "");
    cell.bind_or_null(8, c.mc_check).bind_or_null(9, c.note).bind_or_null(10, std::string(cause_name(c.cause)));
    cell.bind_or_null(11, c.posed ? posing_to_json(*c.posed).dump() : std::string());
    cell.bind_or_null(12, c.declared ? declared_to_json(*c.declared).dump() : std::string());
    cell.run();
  }
}

void Store::replace_column(const std::string& name, Origin origin, const std::string& provenance,
                           const std::vector<Cell>& cells, const std::string& source_digest,
                           std::optional<int64_t> run_id) {
  before_write();
  Transaction tx(db_);
  write_column_rows(name, origin, provenance, cells, source_digest, run_id);
  tx.commit();
}

void Store::remove_column(const std::string& name) {
  before_write();
  Transaction tx(db_);
  Stmt del(db_, "DELETE FROM flavor WHERE name = ?1");
  del.bind(1, name).run();
  tx.commit();
}

int64_t Store::start_run(const std::string& flavor, const std::string& kind, const std::string& toolchain_json) {
  before_write();
  Transaction tx(db_);
  Stmt ins(db_, "INSERT INTO run(flavor, kind, started_at, pid, toolchain, outcome) VALUES (?1, ?2, ?3, ?4, ?5, 'running')");
  ins.bind(1, flavor).bind(2, kind).bind(3, utc_now()).bind(4, static_cast<int64_t>(::getpid())).bind(5, toolchain_json);
  ins.run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

void Store::finish_run(int64_t id, const std::string& outcome, const std::string& counts_json,
                       const std::string& message) {
  before_write();
  Transaction tx(db_);
  Stmt up(db_, "UPDATE run SET outcome = ?2, ended_at = ?3, counts = ?4, message = ?5 WHERE id = ?1");
  up.bind(1, id).bind(2, outcome).bind(3, utc_now()).bind_or_null(4, counts_json).bind_or_null(5, message).run();
  tx.commit();
}

void Store::finish_measured_run(int64_t id, const Column& column, const std::string& provenance_json,
                                const std::string& source_digest, const std::string& counts_json) {
  before_write();
  Transaction tx(db_);
  write_column_rows(column.provenance.flavor, Origin::kMeasured, provenance_json, column.cells, source_digest, id);
  Stmt up(db_, "UPDATE run SET outcome = 'ok', ended_at = ?2, counts = ?3 WHERE id = ?1");
  up.bind(1, id).bind(2, utc_now()).bind(3, counts_json).run();
  tx.commit();
}

void Store::mark_interrupted_runs() {
  std::vector<int64_t> stale;
  {
    Stmt q(db_, "SELECT id, pid FROM run WHERE outcome = 'running'");
    while (q.step()) {
      pid_t pid = static_cast<pid_t>(q.integer(1));
      if (pid != ::getpid() && (::kill(pid, 0) != 0 && errno == ESRCH)) stale.push_back(q.integer(0));
    }
  }
  if (stale.empty()) return;
  before_write();
  Transaction tx(db_);
  Stmt up(db_, "UPDATE run SET outcome = 'interrupted', ended_at = ?2, message = 'the process ended before the run finished' WHERE id = ?1");
  for (int64_t id : stale) up.bind(1, id).bind(2, utc_now()).run();
  tx.commit();
}

std::vector<RunRow> Store::runs(int limit) const {
  std::vector<RunRow> out;
  Stmt q(db_, "SELECT id, flavor, kind, started_at, ended_at, pid, toolchain, outcome, counts, message FROM run ORDER BY id DESC LIMIT ?1");
  q.bind(1, static_cast<int64_t>(limit));
  while (q.step()) {
    RunRow r;
    r.id = q.integer(0);
    r.flavor = q.text(1);
    r.kind = q.text(2);
    r.started_at = q.text(3);
    r.ended_at = q.text(4);
    r.pid = q.integer(5);
    r.toolchain = q.text(6);
    r.outcome = q.text(7);
    r.counts = q.text(8);
    r.message = q.text(9);
    out.push_back(std::move(r));
  }
  return out;
}

void sync_store_from_data(Store& store, const fs::path& data_root, const std::string& except) {
  recover_directories(data_root);
  std::vector<std::string> committed = list_column_dirs(data_root);
  for (const auto& flavor : committed) {
    if (flavor == except) continue;
    fs::path dir = data_root / flavor;
    std::string digest = stamped_digest(store, "column:" + flavor, {dir / "column.json", dir / "cells.jsonl"},
                                        [&] { return column_dir_digest(dir); });
    auto row = store.flavor(flavor);
    if (row && row->source_digest == digest) continue;
    Column column = read_column_dir(dir);
    store.replace_column(flavor, column.provenance.measured ? Origin::kMeasured : Origin::kDescriptor,
                         render_column_json(column), column.cells, digest, std::nullopt);
  }
  for (const auto& row : store.flavors()) {
    if (row.origin == Origin::kImported || row.name == except) continue;
    if (std::find(committed.begin(), committed.end(), row.name) == committed.end()) store.remove_column(row.name);
  }
}

SyncLock::SyncLock(const fs::path& database) {
  try {
    lock_.emplace(database.string() + ".sync-lock");
  } catch (const Error&) {
    // A read-only folder: the sync goes on without the lock.
  }
}

}  // namespace archdb
