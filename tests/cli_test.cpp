// tests/cli_test.cpp — the `archdb` binary end to end, on real files: regenerate, check, query, import and
// export; kill -9 in the middle of a regeneration; corrupt inputs refused with one line and a nonzero exit.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "test_support.h"

extern char** environ;

namespace archdb {
namespace {
namespace fs = std::filesystem;
using test::run_archdb;

constexpr const char* kSmallCatalog =
    "mfma.f32.4x4x4bf16.1k   llvm.amdgcn.mfma.f32.4x4x4bf16.1k\n"
    "fmuladd.v2f16           llvm.fmuladd[<2 x half>]\n"
    "made.up                 llvm.amdgcn.made.up\n";
constexpr const char* kTargets = "gfx90a\ngfx942\ngfx1201\n";

// A checkout-like set-up in a temporary folder: catalog, targets, data/, database.
struct Workspace {
  test::TempDir dir;
  Workspace(const std::string& catalog = kSmallCatalog) {
    test::write(dir / "catalog.txt", catalog);
    test::write(dir / "targets.txt", kTargets);
    fs::create_directories(dir / "data");
  }
  std::vector<std::string> args(std::vector<std::string> rest) const {
    std::vector<std::string> a = {"--db",      (dir / "db.sqlite").string(), "--data", (dir / "data").string(),
                                  "--catalog", (dir / "catalog.txt").string(), "--targets-file",
                                  (dir / "targets.txt").string()};
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  }
  fs::path column() const { return dir / "data/llvm22"; }
};

std::string flavor() {
  // The flavor this build measures, from its own version line.
  auto r = run_archdb({"--version"});
  size_t at = r.out.find("(flavor ");
  return r.out.substr(at + 8, r.out.find(')', at) - at - 8);
}

TEST(Cli, RegenWritesTheColumnAndRegeneratingIsByteIdentical) {
  Workspace ws;
  auto first = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string cells = test::read(ws.column() / "cells.jsonl"), column = test::read(ws.column() / "column.json");
  EXPECT_NE(cells.find(R"("key":"mfma.f32.4x4x4bf16.1k","target":"gfx90a","status":"ok")"), std::string::npos);
  EXPECT_NE(first.out.find("gfx1201"), std::string::npos) << "prints a summary";
  auto second = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), cells);
  EXPECT_EQ(test::read(ws.column() / "column.json"), column);
}

TEST(Cli, CheckPassesOnAnUnchangedColumnAndNamesEveryChangedCell) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  auto same = run_archdb(ws.args({"regen", "--flavor", flavor(), "--check"}));
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  // Tamper with one committed cell (keeping the file valid) and with the probe's posing.
  std::string cells = test::read(ws.column() / "cells.jsonl");
  size_t at = cells.find(R"("target":"gfx1201","status":"arch_absent")");
  ASSERT_NE(at, std::string::npos);
  std::string line_start = cells.substr(cells.rfind('\n', at) + 1, 40);
  size_t ev = cells.find("\"evidence\":\"", at);
  cells.insert(ev + 12, "tampered ");
  test::write(ws.column() / "cells.jsonl", cells);
  auto changed = run_archdb(ws.args({"regen", "--flavor", flavor(), "--check"}));
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.out.find("mfma.f32.4x4x4bf16.1k/gfx1201: arch_absent (tampered"), std::string::npos) << changed.out;
  auto posing = run_archdb(ws.args({"regen", "--flavor", flavor(), "--check", "--timeout", "30"}));
  EXPECT_EQ(posing.exit_code, 1);
  EXPECT_NE(posing.out.find("probe timeout_s: 60 -> 30"), std::string::npos) << posing.out;
}

TEST(Cli, RefusesAFlavorThisBuildDoesNotLink) {
  Workspace ws;
  auto r = run_archdb(ws.args({"regen", "--flavor", "llvm7"}));
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("cannot measure llvm7"), std::string::npos) << r.err;
  auto bad = run_archdb(ws.args({"regen", "--flavor", "latest"}));
  EXPECT_EQ(bad.exit_code, 2);
  auto target = run_archdb(ws.args({"regen", "--flavor", flavor(), "--targets", "gfx9000"}));
  EXPECT_EQ(target.exit_code, 2);
  EXPECT_NE(target.err.find("unknown target 'gfx9000'"), std::string::npos) << target.err;
}

TEST(Cli, QueryShowsTargetsByFlavorsAndJson) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  auto table = run_archdb(ws.args({"query", "mfma.f32.4x4x4bf16.1k"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("v_mfma_f32_4x4x4_16b_bf16"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Cannot select"), std::string::npos) << table.out;
  auto json = run_archdb(ws.args({"query", "mfma.f32.4x4x4bf16.1k", "--target", "gfx90a", "--json"}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"lowered_to\""), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("gfx1201"), std::string::npos) << json.out;
  auto unknown = run_archdb(ws.args({"query", "mfma.f32.4x4x4bf16"}));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("did you mean: mfma.f32.4x4x4bf16.1k"), std::string::npos) << unknown.err;
}

TEST(Cli, ExportThenImportRoundTrips) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  auto exported = run_archdb(ws.args({"export", "--flavor", flavor(), "--out", (ws.dir / "out").string()}));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(test::read(ws.dir / "out" / flavor() / "cells.jsonl"), test::read(ws.column() / "cells.jsonl"));
  Workspace other;
  auto imported = run_archdb(other.args({"import", (ws.dir / "out" / flavor()).string()}));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(test::read(other.column() / "cells.jsonl"), test::read(ws.column() / "cells.jsonl"));
  EXPECT_EQ(run_archdb(other.args({"query", "made.up"})).exit_code, 0);
}

TEST(Cli, RockeColumnsImportMarkedAndRoundTrip) {
  fs::path peer = test::source_dir() / ".." / "shared" / "reference" / "rocke-columns" / "intrinsic_arch_domain.llvm22.json";
  if (!fs::exists(peer)) GTEST_SKIP() << "rocKE reference columns not found at " << peer;
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  auto imported = run_archdb(ws.args({"import", "--format", "rocke-v1", peer.string()}));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("rocke-v1:llvm22"), std::string::npos) << imported.out;
  // Shown, marked imported, kept out of data/.
  auto q = run_archdb(ws.args({"query", "mfma.f32.4x4x4f16"}));
  EXPECT_NE(q.out.find("rocke-v1:llvm22 (imported)"), std::string::npos) << q.out;
  EXPECT_FALSE(fs::exists(ws.dir / "data" / "rocke-v1:llvm22"));
  auto h = run_archdb(ws.args({"history", "mfma.f32.4x4x4f16", "--json"}));
  EXPECT_NE(h.out.find("\"origin\": \"imported\""), std::string::npos) << h.out;
  // Ours exported in the peer's format imports back; the export of that is the same file.
  fs::path out = ws.dir / "ours.json";
  ASSERT_EQ(run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor(), "--out", out.string()})).exit_code, 0);
  ASSERT_EQ(run_archdb(ws.args({"import", "--format", "rocke-v1", out.string()})).exit_code, 0);
  auto cmp = run_archdb(ws.args({"compare", "--flavor", flavor(), "--with", out.string()}));
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out;
  EXPECT_NE(cmp.out.find("same status: 9 (100.0%)"), std::string::npos) << cmp.out;
  auto diff = run_archdb(ws.args({"diff", flavor(), "rocke-v1:" + flavor()}));
  EXPECT_EQ(diff.exit_code, 0);
  EXPECT_NE(diff.out.find("lowering changed"), std::string::npos) << "the format keeps no lowered_to: " << diff.out;
  // A mislabelled file is refused, and nothing is stored.
  std::string text = test::read(peer);
  size_t at = text.find("\"flavor\": \"llvm22\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "\"flavor\": \"llvm23\"");
  test::write(ws.dir / "mislabelled.json", text);
  auto bad = run_archdb(ws.args({"import", "--format", "rocke-v1", (ws.dir / "mislabelled.json").string()}));
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("mislabelled"), std::string::npos) << bad.err;
  EXPECT_EQ(run_archdb(ws.args({"diff", flavor(), "rocke-v1:llvm23"})).exit_code, 2);
}

TEST(Cli, CorruptCellsFileIsOneClearError) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string cells = test::read(ws.column() / "cells.jsonl");
  cells.insert(cells.find('\n') + 1, "{\"key\": oops}\n");
  test::write(ws.column() / "cells.jsonl", cells);
  fs::remove(ws.dir / "db.sqlite");  // a fresh database is built from data/ on first use
  auto r = run_archdb(ws.args({"query", "made.up"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("llvm22/cells.jsonl:2: invalid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, CorruptDatabaseIsOneClearErrorAndIsLeftAlone) {
  Workspace ws;
  test::write(ws.dir / "db.sqlite", std::string(4096, '\x7f'));
  auto r = run_archdb(ws.args({"runs"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("db.sqlite"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(test::read(ws.dir / "db.sqlite"), std::string(4096, '\x7f'));
}

TEST(Cli, BadCatalogEntryIsOneClearError) {
  Workspace ws(std::string(kSmallCatalog) + "Broken.key llvm.x\n");
  auto r = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("catalog.txt:4: invalid key 'Broken.key'"), std::string::npos) << r.err;
  Workspace typed(std::string(kSmallCatalog) + "bad.type llvm.fmuladd[flaot]\n");
  auto t = run_archdb(typed.args({"regen", "--flavor", flavor()}));
  EXPECT_EQ(t.exit_code, 3);
  EXPECT_NE(t.err.find("catalog.txt:4: key 'bad.type': invalid overload type 'flaot'"), std::string::npos) << t.err;
  EXPECT_FALSE(fs::exists(typed.column()));
}

std::string dump_cells(const fs::path& db) {
  sqlite3* h;
  sqlite3_open(db.c_str(), &h);
  sqlite3_stmt* s;
  std::string out;
  sqlite3_prepare_v2(h, "SELECT flavor, decl_key, target, status, evidence FROM cell ORDER BY 1, 2, 3", -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW)
    for (int i = 0; i < 5; ++i) {
      const unsigned char* t = sqlite3_column_text(s, i);
      out += (t ? reinterpret_cast<const char*>(t) : "-") + std::string(i == 4 ? "\n" : "|");
    }
  sqlite3_finalize(s);
  sqlite3_close(h);
  return out;
}

TEST(Cli, KillDuringRegenLeavesDatabaseAndDataAsTheyWere) {
  // The whole catalog on every target: a run long enough to be killed in the middle of measuring.
  Workspace ws(test::read(test::source_dir() / "schema/catalog.txt"));
  test::write(ws.dir / "targets.txt", test::read(test::source_dir() / "schema/targets.txt"));
  test::write(ws.dir / "small.txt", kSmallCatalog);
  auto seed = ws.args({"regen", "--flavor", flavor()});
  seed[5] = (ws.dir / "small.txt").string();  // --catalog: a committed column to protect
  ASSERT_EQ(run_archdb(seed).exit_code, 0);
  std::string cells = test::read(ws.column() / "cells.jsonl"), column = test::read(ws.column() / "column.json");
  std::string db_before = dump_cells(ws.dir / "db.sqlite");
  ASSERT_FALSE(db_before.empty());

  std::vector<std::string> argv_s = {ARCHDB_BINARY};
  for (auto& a : ws.args({"regen", "--flavor", flavor()})) argv_s.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  // Wait until the run is recorded, then a little longer: the probe is measuring.
  for (int i = 0; i < 200 && dump_cells(ws.dir / "db.sqlite").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be killed";

  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), cells);
  EXPECT_EQ(test::read(ws.column() / "column.json"), column);
  EXPECT_EQ(dump_cells(ws.dir / "db.sqlite"), db_before);
  for (auto& e : fs::directory_iterator(ws.dir / "data"))
    EXPECT_EQ(e.path().filename(), flavor()) << "left behind: " << e.path();
  // The next command finds the database whole and records the run as interrupted.
  auto runs = run_archdb(ws.args({"runs"}));
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("interrupted"), std::string::npos) << runs.out;
}

}  // namespace
}  // namespace archdb
