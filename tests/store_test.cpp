// tests/store_test.cpp — the SQLite store on real files: migrations, WAL, transactional column writes, the
// run record, and refusal of corrupt or foreign databases.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "db/column_files.h"
#include "db/store.h"
#include "schema/migrations.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {

std::vector<Cell> cells_of(int n) {
  std::vector<Cell> out;
  for (int i = 0; i < n; ++i)
    out.push_back({"k" + std::to_string(i), "gfx90a", Status::kOk, "llvm.amdgcn.k", "", {"v_x"}, std::nullopt, "", ""});
  return out;
}

std::string pragma(const std::filesystem::path& db, const char* sql) {
  sqlite3* h;
  sqlite3_open(db.c_str(), &h);
  sqlite3_stmt* s;
  sqlite3_prepare_v2(h, sql, -1, &s, nullptr);
  std::string v = sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "";
  sqlite3_finalize(s);
  sqlite3_close(h);
  return v;
}

TEST(Store, CreatesAndMigratesInWalMode) {
  test::TempDir dir;
  auto store = Store::open(dir / "a.sqlite");
  EXPECT_EQ(store->schema_version(), schema_migrations().back().version);
  store.reset();
  EXPECT_EQ(pragma(dir / "a.sqlite", "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Store::open(dir / "a.sqlite")->schema_version(), schema_migrations().back().version);  // nothing twice
}

// A database in a folder that does not exist is an error naming the folder, and no folder is made for it.
TEST(Store, AFolderThatDoesNotExistIsNotMade) {
  test::TempDir dir;
  try {
    Store::open(dir / "no" / "such" / "db.sqlite");
    FAIL() << "opened a database in a folder that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the folder " + (dir / "no" / "such").string() + " does not exist"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
  auto cli = test::run_archdb({"--db", (dir / "typo" / "db.sqlite").string(), "runs"});
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find("does not exist"), std::string::npos) << cli.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "typo"));
}

// A parallel build's first checks open a database that does not exist yet, all at the same moment: every one
// of them opens it (SQLite's busy timeout does not cover switching a new file to WAL; the opens take turns).
TEST(Store, ProcessesOpeningANewDatabaseAtOnceAllOpenIt) {
  test::TempDir dir;
  constexpr int kRounds = 30, kProcesses = 6;
  int failures = 0;
  std::string first_error;
  for (int round = 0; round < kRounds; ++round) {
    std::filesystem::path db = dir / ("r" + std::to_string(round) + ".sqlite");
    int start[2], errors[2];
    ASSERT_EQ(::pipe(start), 0);
    ASSERT_EQ(::pipe(errors), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(start[1]);
        char go;
        if (::read(start[0], &go, 1) != 0) ::_exit(2);  // released together when the pipe closes
        try {
          Store::open(db);
        } catch (const Error& e) {
          std::string line = std::string(e.what()) + "\n";
          if (::write(errors[1], line.data(), line.size()) < 0) ::_exit(3);
          ::_exit(1);
        }
        ::_exit(0);
      }
      children.push_back(pid);
    }
    ::close(start[0]);
    ::close(errors[1]);
    ::close(start[1]);  // go
    for (pid_t pid : children) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    }
    char buf[512];
    ssize_t n = ::read(errors[0], buf, sizeof buf);
    if (n > 0 && first_error.empty()) first_error.assign(buf, static_cast<size_t>(n));
    ::close(errors[0]);
    EXPECT_EQ(pragma(db, "PRAGMA journal_mode"), "wal");
  }
  EXPECT_EQ(failures, 0) << "of " << kRounds * kProcesses << " opens; the first: " << first_error;
}

TEST(Store, ReplacesAColumnInOneTransaction) {
  test::TempDir dir;
  auto store = Store::open(dir / "a.sqlite");
  store->replace_column("llvm22", Origin::kMeasured, "{}", cells_of(3), "d1", std::nullopt);
  EXPECT_EQ(store->cells("llvm22").size(), 3u);
  // A write that fails half-way (a probe_error cell is refused by the schema's rules) leaves the old column.
  auto bad = cells_of(5);
  bad[4].status = Status::kProbeError;
  EXPECT_THROW(store->replace_column("llvm22", Origin::kMeasured, "{}", bad, "d2", std::nullopt), Error);
  EXPECT_EQ(store->cells("llvm22").size(), 3u);
  EXPECT_EQ(store->flavor("llvm22")->source_digest, "d1");
  // The schema itself refuses an ok cell with evidence.
  auto evidence = cells_of(1);
  evidence[0].evidence = "should not be here";
  EXPECT_THROW(store->replace_column("llvm22", Origin::kMeasured, "{}", evidence, "d3", std::nullopt), Error);
  EXPECT_EQ(store->cells("llvm22").size(), 3u);
}

TEST(Store, RecordsRunsAndMarksAbandonedOnesInterrupted) {
  test::TempDir dir;
  auto store = Store::open(dir / "a.sqlite");
  int64_t run = store->start_run("llvm22", "regen", "{\"llvm_version\":\"22\"}");
  store->finish_run(run, "ok", "{\"ok\":1}", "");
  int64_t stale = store->start_run("llvm22", "regen", "{}");
  // Pretend the run belonged to a process that is gone.
  sqlite3* h;
  sqlite3_open((dir / "a.sqlite").c_str(), &h);
  sqlite3_exec(h, ("UPDATE run SET pid = 999999999 WHERE id = " + std::to_string(stale)).c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(h);
  store->mark_interrupted_runs();
  auto runs = store->runs(10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].outcome, "interrupted");
  EXPECT_EQ(runs[1].outcome, "ok");
  EXPECT_FALSE(runs[1].ended_at.empty());
}

TEST(Store, CorruptFileIsRefusedWithItsName) {
  test::TempDir dir;
  test::write(dir / "bad.sqlite", std::string(8192, 'x'));
  try {
    Store::open(dir / "bad.sqlite");
    FAIL() << "opened a corrupt file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find((dir / "bad.sqlite").string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read(dir / "bad.sqlite"), std::string(8192, 'x'));  // and left untouched
}

TEST(Store, ForeignDatabaseIsRefused) {
  test::TempDir dir;
  sqlite3* h;
  sqlite3_open((dir / "other.sqlite").c_str(), &h);
  sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  try {
    Store::open(dir / "other.sqlite");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an archdb database"), std::string::npos) << e.what();
  }
}

TEST(Store, NewerSchemaIsRefused) {
  test::TempDir dir;
  Store::open(dir / "a.sqlite");
  sqlite3* h;
  sqlite3_open((dir / "a.sqlite").c_str(), &h);
  sqlite3_exec(h, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  try {
    Store::open(dir / "a.sqlite");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99 is newer"), std::string::npos) << e.what();
  }
}

TEST(Store, SyncsCommittedColumnsByDigest) {
  test::TempDir dir;
  Column c;
  c.provenance.flavor = "llvm22";
  c.provenance.targets = {"gfx90a"};
  c.cells = cells_of(2);
  c.sort();
  c.recount();
  write_column_dir(dir / "data", c);
  auto store = Store::open(dir / "a.sqlite");
  sync_store_from_data(*store, dir / "data");
  EXPECT_EQ(store->cells("llvm22").size(), 2u);
  EXPECT_EQ(store->flavor("llvm22")->source_digest, column_digest(c));
  // A corrupt committed column is an error naming the file, and the store keeps what it had.
  test::write(dir / "data/llvm22/cells.jsonl", "{\n");
  EXPECT_THROW(sync_store_from_data(*store, dir / "data"), Error);
  EXPECT_EQ(store->cells("llvm22").size(), 2u);
  // A folder that is gone takes its measured column with it.
  std::filesystem::remove_all(dir / "data/llvm22");
  sync_store_from_data(*store, dir / "data");
  EXPECT_FALSE(store->flavor("llvm22"));
}

}  // namespace
}  // namespace archdb

namespace archdb {
namespace {
namespace fs = std::filesystem;

std::string digest_stamped_as(Store& store, const std::string& key) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(store.handle(), "SELECT digest FROM file_stamp WHERE key = ?1", -1, &s, nullptr);
  sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  std::string out = sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "";
  sqlite3_finalize(s);
  return out;
}

// A command's sync of data/ re-reads only files whose stat stamp changed: an unchanged stamp gives the
// remembered digest without reading the files; a changed one makes it read and hash them again.
TEST(Store, SyncTakesDigestsOfUnchangedFilesFromTheirStamps) {
  test::TempDir dir;
  auto store = Store::open(dir / "db.sqlite");
  const auto data = test::source_dir() / "data";  // committed files, settled long ago
  sync_store_from_data(*store, data);
  const std::string real = store->flavor("llvm22")->source_digest;
  ASSERT_EQ(digest_stamped_as(*store, "column:llvm22"), real);
  // The remembered digest is what the next sync uses while the stamp holds: nothing is re-read.
  sqlite3_exec(store->handle(), "UPDATE file_stamp SET digest = 'feedfacefeedface' WHERE key = 'column:llvm22'", nullptr,
               nullptr, nullptr);
  sync_store_from_data(*store, data);
  EXPECT_EQ(store->flavor("llvm22")->source_digest, "feedfacefeedface");
  // A stamp that is not the files' (they were written since) makes the sync read and hash them again.
  sqlite3_exec(store->handle(), "UPDATE file_stamp SET stamp = 'stale' WHERE key = 'column:llvm22'", nullptr, nullptr,
               nullptr);
  sync_store_from_data(*store, data);
  EXPECT_EQ(store->flavor("llvm22")->source_digest, real);
  EXPECT_EQ(digest_stamped_as(*store, "column:llvm22"), real);
}

// A file written just now is hashed every time until it settles: its stamp could still change unseen.
TEST(Store, FreshlyWrittenFilesAreNotStamped) {
  test::TempDir dir;
  fs::create_directories(dir / "data");
  fs::copy(test::source_dir() / "data" / "llvm19", dir / "data" / "llvm19");
  auto store = Store::open(dir / "db.sqlite");
  sync_store_from_data(*store, dir / "data");
  EXPECT_EQ(digest_stamped_as(*store, "column:llvm19"), "");
  EXPECT_FALSE(store->flavor("llvm19")->source_digest.empty());
}

}  // namespace
}  // namespace archdb

namespace archdb {
namespace {

// Opening reads only the header; a corrupt page is still found before anything is written.
TEST(Store, ACorruptPageIsFoundBeforeAnyWrite) {
  test::TempDir dir;
  const auto db = dir / "db.sqlite";
  {
    auto store = Store::open(db);
    sync_store_from_data(*store, test::source_dir() / "data");
  }  // the last connection checkpoints the WAL into the file
  const auto size = std::filesystem::file_size(db);
  ASSERT_GT(size, 64u * 1024);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(16384, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto store = Store::open(db);
  try {
    store->remove_column("llvm19");
    FAIL() << "wrote to a corrupt database";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find(db.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace archdb
