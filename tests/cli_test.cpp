// tests/cli_test.cpp — the `archdb` binary end to end, on real files: regenerate, check, query, import and
// export; kill -9 in the middle of a regeneration; corrupt inputs refused with one line and a nonzero exit.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include <nlohmann/json.hpp>

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

// Every cell in the database, one line each.
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

// A measuring command runs with malloc's huge pages and one address layout (no ASLR, so that where LLVM crashes on
// bad memory, and the pass a cell's evidence names, is the same every run): it starts itself again so set up.
TEST(Cli, AMeasuringCommandRunsWithHugePagesAndAFixedAddressLayout) {
  Workspace ws;
  std::vector<std::string> args = ws.args({"regen", "--flavor", flavor()});
  args.insert(args.begin(), ARCHDB_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, ARCHDB_BINARY, &quiet, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&quiet);
  const std::string proc = "/proc/" + std::to_string(pid);
  bool fixed_layout = false, huge_pages = false;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    std::string persona = test::read(proc + "/personality"), env = test::read(proc + "/environ");
    if (!persona.empty()) fixed_layout |= (std::stoul(persona, nullptr, 16) & 0x0040000) != 0;  // ADDR_NO_RANDOMIZE
    huge_pages |= env.find("glibc.malloc.hugetlb=1") != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fixed_layout);
  EXPECT_TRUE(huge_pages);
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
  // Each side with the call it was posed as.
  EXPECT_NE(changed.out.find("mfma.f32.4x4x4bf16.1k/gfx1201: arch_absent posed with immediates 0, 0, 0; divergent operands; "
                             "result used (tampered"),
            std::string::npos)
      << changed.out;
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
  EXPECT_NE(unknown.err.find("unknown name 'mfma.f32.4x4x4bf16'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("`archdb search mfma.f32.4x4x4bf16` finds"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("mfma.f32.4x4x4bf16.1k (key)"), std::string::npos) << unknown.err;
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.err;
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

// A peer's file holds exactly the keys and arches it wires: --keys (a list or @FILE) and --targets choose them,
// and whatever is not in the column is an error naming it.
TEST(Cli, ARockeExportHoldsExactlyTheKeysAndTargetsAsked) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  fs::path out = ws.dir / "peer.json";
  test::write(ws.dir / "keys.txt", "# the peer's keys\nmfma.f32.4x4x4bf16.1k\n");
  for (const std::string& keys : std::vector<std::string>{"mfma.f32.4x4x4bf16.1k", "@" + (ws.dir / "keys.txt").string()}) {
    auto r = run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor(), "--keys", keys, "--targets",
                                 "gfx942,gfx90a", "--out", out.string()}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(test::read(out));
    EXPECT_EQ(j["toolchain"]["arches"], nlohmann::json({"gfx90a", "gfx942"}));
    ASSERT_EQ(j["keys"].size(), 1u) << j["keys"].dump();
    EXPECT_EQ(j["keys"]["mfma.f32.4x4x4bf16.1k"].size(), 2u);
    EXPECT_EQ(j["keys"]["mfma.f32.4x4x4bf16.1k"]["gfx90a"]["status"], "ok");
    EXPECT_EQ(j["toolchain"]["generator"], 4);
    EXPECT_EQ(j["toolchain"]["probe_cflags"], nlohmann::json({"-O0", "-nogpulib"}));
  }
  auto unknown_key = run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor(), "--keys", "nope"}));
  EXPECT_EQ(unknown_key.exit_code, 2);  // usage
  EXPECT_NE(unknown_key.err.find("unknown key 'nope'"), std::string::npos) << unknown_key.err;
  auto unknown_target =
      run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor(), "--targets", "gfx90a,gfx1100"}));
  EXPECT_EQ(unknown_target.exit_code, 2);  // usage
  EXPECT_NE(unknown_target.err.find("unknown target 'gfx1100' (" + flavor() + " was measured on: gfx90a, gfx942, gfx1201)"),
            std::string::npos)
      << unknown_target.err;
  auto folder = run_archdb(ws.args({"export", "--flavor", flavor(), "--keys", "made.up", "--out", (ws.dir / "o").string()}));
  EXPECT_EQ(folder.exit_code, 2);  // usage
  EXPECT_NE(folder.err.find("written whole"), std::string::npos) << folder.err;

  // rocKE's arches are processors: the committed column's wave64 targets are not exported whole, nor by name.
  std::vector<std::string> committed = {"--data", (test::source_dir() / "data").string(), "--db",
                                        (ws.dir / "committed.sqlite").string()};
  auto args = [&](std::vector<std::string> more) {
    more.insert(more.begin(), committed.begin(), committed.end());
    return more;
  };
  auto whole = run_archdb(args({"export", "--format", "rocke-v1", "--flavor", "llvm22"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  nlohmann::json arches = nlohmann::json::parse(whole.out)["toolchain"]["arches"];
  EXPECT_EQ(arches.size(), 11u) << arches.dump();
  for (const auto& a : arches) EXPECT_EQ(a.get<std::string>().find(':'), std::string::npos) << arches.dump();
  auto featured = run_archdb(args({"export", "--format", "rocke-v1", "--flavor", "llvm22", "--targets", "gfx1100:+wavefrontsize64"}));
  EXPECT_EQ(featured.exit_code, 2);
  EXPECT_NE(featured.err.find("'gfx1100:+wavefrontsize64,-wavefrontsize32' has features"), std::string::npos) << featured.err;
}

// A peer's declaration table becomes a catalog that measures each key exactly as the peer declares it: an
// MFMA declared with the operands LLVM has lowers, the same intrinsic declared with two operands too many is
// refused as written (name_absent in rocKE's terms, the evidence saying why).
TEST(Cli, APeersDeclarationTableIsMeasuredAsDeclared) {
  test::TempDir dir;
  const std::string table =
      "# key<TAB>declare line, as rocKE's decl table dumps\n"
      "mfma.f32.4x4x4bf16.1k\tdeclare <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16>, <4 x i16>, "
      "<4 x float>, i32 immarg, i32 immarg, i32 immarg)\n"
      "\n"
      "mfma.scale.f32.16x16x128.f8f6f4\tdeclare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4(<8 x i32>, "
      "<8 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32, i32 immarg)\n";
  test::write(dir / "decls.tsv", table);
  auto made = run_archdb({"catalog", "import", "--format", "rocke-decls", (dir / "decls.tsv").string(), "--out",
                          (dir / "catalog.txt").string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  Workspace ws(test::read(dir / "catalog.txt"));
  auto regen = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  ASSERT_EQ(regen.exit_code, 0) << regen.err;
  auto exported = run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor()}));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  nlohmann::json j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["keys"]["mfma.f32.4x4x4bf16.1k"]["gfx90a"]["status"], "ok");
  EXPECT_EQ(j["keys"]["mfma.f32.4x4x4bf16.1k"]["gfx1201"]["status"], "arch_absent");
  EXPECT_EQ(j["canonical"]["mfma.f32.4x4x4bf16.1k"], "llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
  const nlohmann::json& scale = j["keys"]["mfma.scale.f32.16x16x128.f8f6f4"]["gfx942"];
  EXPECT_EQ(scale["status"], "name_absent") << scale.dump();
  EXPECT_EQ(scale["evidence"].get<std::string>().rfind("signature_mismatch: ", 0), 0u) << scale.dump();
  EXPECT_FALSE(j["canonical"].contains("mfma.scale.f32.16x16x128.f8f6f4"));

  // A table's faults name its file and line.
  auto refused = [&](const std::string& text, const std::string& expected) {
    test::write(dir / "bad.tsv", text);
    auto r = run_archdb({"catalog", "import", "--format", "rocke-decls", (dir / "bad.tsv").string()});
    EXPECT_EQ(r.exit_code, 3) << text;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  };
  refused("k.a\tdeclare void @llvm.amdgcn.s.barrier()\nk.b declare void @llvm.amdgcn.s.barrier()\n",
          "bad.tsv:2: expected KEY<TAB>declare line");
  refused("k.a\tdeclare void @llvm.amdgcn.s.barrier()\nk.a\tdeclare void @llvm.amdgcn.s.barrier()\n", "bad.tsv:2: ");
  refused("K.A\tdeclare void @llvm.amdgcn.s.barrier()\n", "bad.tsv:1: invalid key 'K.A'");
  refused("k.a\tvoid @llvm.amdgcn.s.barrier()\n", "bad.tsv:1: the declaration of 'k.a' does not start with 'declare '");
  refused("k.a\tdeclare void @llvm.amdgcn.s.barrier() #0\n", "bad.tsv:1: the declaration of 'k.a' holds '#'");
  refused("# nothing\n", "bad.tsv: no KEY<TAB>declare line");
  auto format = run_archdb({"catalog", "import", "--format", "csv", (dir / "decls.tsv").string()});
  EXPECT_EQ(format.exit_code, 2);  // usage
  EXPECT_NE(format.err.find("unknown format 'csv'"), std::string::npos) << format.err;
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

fs::path rocke_reference(const std::string& flavor) {
  return test::source_dir() / ".." / "shared" / "reference" / "rocke-columns" / ("intrinsic_arch_domain." + flavor + ".json");
}

// Imports `doc` written to NAME.json; expects a refusal (exit 3, one line naming the file and `field`) with
// nothing stored.
void expect_rocke_refused(const Workspace& ws, const nlohmann::json& doc, const std::string& name,
                          const std::string& field) {
  fs::path file = ws.dir / (name + ".json");
  test::write(file, doc.dump(1));
  auto r = run_archdb(ws.args({"import", "--format", "rocke-v1", file.string()}));
  EXPECT_EQ(r.exit_code, 3) << name << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
  EXPECT_NE(r.err.find(file.string() + ": "), std::string::npos) << name << ": " << r.err;
  EXPECT_NE(r.err.find(field), std::string::npos) << name << ": " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << name << ": " << r.err;
  EXPECT_EQ(dump_cells(ws.dir / "db.sqlite").find("rocke-v1:"), std::string::npos) << name << ": stored";
}

TEST(Cli, MalformedRockeFilesAreRefusedNamingTheFileAndTheField) {
  fs::path peer = rocke_reference("llvm22");
  if (!fs::exists(peer)) GTEST_SKIP() << "rocKE reference columns not found at " << peer;
  Workspace ws;
  const nlohmann::json good = nlohmann::json::parse(test::read(peer));
  const std::string key = good["keys"].begin().key();
  ASSERT_TRUE(good["keys"][key].contains("gfx90a"));
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return j;
  };
  std::string cell = "keys." + key + ".gfx90a";
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"] = "ok"; }), "cell-string", cell + ": expected an object, got string");
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"]["status"] = 1; }), "status-number", cell + ".status: expected a string, got number 1");
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"]["evidence"] = 5; }), "evidence-number", cell + ".evidence: expected a string");
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"]["verified_on"] = 22; }), "verified-number", cell + ".verified_on: expected a string");
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"]["probe_imm"] = "1"; }), "imm-string", cell + ".probe_imm: expected an integer");
  expect_rocke_refused(ws, with([&](auto& j) { j["schema"] = 5; }), "schema-number", "schema: expected a string, got number 5");
  expect_rocke_refused(ws, with([&](auto& j) { j["canonical"] = nlohmann::json::array({"x"}); }), "canonical-array", "canonical: expected an object, got array");
  expect_rocke_refused(ws, with([&](auto& j) { j["canonical"][key] = 7; }), "canonical-number", "canonical." + key + ": expected a string");
  expect_rocke_refused(ws, with([&](auto& j) { j["toolchain"] = "llvm22"; }), "toolchain-string", "toolchain: expected an object");
  expect_rocke_refused(ws, with([&](auto& j) { j["toolchain"]["arches"] = "gfx90a"; }), "arches-string", "toolchain.arches: expected an array");
  expect_rocke_refused(ws, with([&](auto& j) { j["toolchain"]["arches"].push_back("gfx9999"); }), "unknown-arch",
                       "toolchain.arches names 'gfx9999', which is neither a wired target nor a processor this LLVM knows");
  expect_rocke_refused(ws, with([&](auto& j) { j["toolchain"]["arches"].push_back("gfx90a"); }), "duplicate-arch",
                       "toolchain.arches names 'gfx90a' twice");
  expect_rocke_refused(ws, with([&](auto& j) { j["keys"][key]["gfx90a"].erase("status"); }), "no-status", cell + ".status: missing");
  // Labelled llvm23 throughout, but made by AMD clang 22: mislabelled.
  expect_rocke_refused(ws, with([&](auto& j) {
                         j["toolchain"]["flavor"] = "llvm23";
                         for (auto& [k, arches] : j["keys"].items())
                           for (auto& [a, c] : arches.items()) c["verified_on"] = "llvm23";
                       }),
                       "relabelled", "toolchain.clang is 'AMD clang version 22.0.0git");
  // A processor LLVM knows, though not wired here, is accepted.
  auto known = with([&](auto& j) {
    j["toolchain"]["arches"].push_back("gfx1010");
    for (auto& [k, arches] : j["keys"].items()) arches["gfx1010"] = arches["gfx90a"];
  });
  test::write(ws.dir / "known.json", known.dump());
  auto r = run_archdb(ws.args({"import", "--format", "rocke-v1", (ws.dir / "known.json").string()}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Importing over an imported column replaces it, and says so.
  auto again = run_archdb(ws.args({"import", "--format", "rocke-v1", peer.string()}));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("replacing imported column rocke-v1:llvm22 (from known.json) with " + peer.string()), std::string::npos)
      << again.err;
}

TEST(Cli, CompareRefusesAnotherFlavorsFileAndNoSharedCellsAndShowsDisagreements) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  fs::path ours = ws.dir / "ours.json";
  ASSERT_EQ(run_archdb(ws.args({"export", "--format", "rocke-v1", "--flavor", flavor(), "--out", ours.string()})).exit_code, 0);
  const nlohmann::json exported = nlohmann::json::parse(test::read(ours));

  // A well-formed column of another flavor (no clang line to contradict its label).
  nlohmann::json other = exported;
  other["toolchain"].erase("clang");
  other["toolchain"]["flavor"] = "llvm99";
  for (auto& [k, arches] : other["keys"].items())
    for (auto& [a, c] : arches.items()) c["verified_on"] = "llvm99";
  test::write(ws.dir / "other.json", other.dump());
  auto wrong = run_archdb(ws.args({"compare", "--flavor", flavor(), "--with", (ws.dir / "other.json").string()}));
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("other.json is a column of llvm99, not " + flavor()), std::string::npos) << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1) << wrong.err;

  // Same flavor, no key in common.
  nlohmann::json disjoint = exported;
  nlohmann::json renamed = nlohmann::json::object();
  for (auto& [k, arches] : disjoint["keys"].items()) renamed["elsewhere." + k] = arches;
  disjoint["keys"] = renamed;
  disjoint["canonical"] = nlohmann::json::object();
  test::write(ws.dir / "disjoint.json", disjoint.dump());
  auto none = run_archdb(ws.args({"compare", "--flavor", flavor(), "--with", (ws.dir / "disjoint.json").string()}));
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_NE(none.err.find("share no (key, target) cell"), std::string::npos) << none.err;

  // A peer that disagrees on one cell: both evidences, exit 1.
  nlohmann::json peer = exported;
  peer["keys"]["mfma.f32.4x4x4bf16.1k"]["gfx90a"] = {{"status", "arch_absent"}, {"verified_on", flavor()},
                                                     {"evidence", "peer: Cannot select this here"}};
  test::write(ws.dir / "peer.json", peer.dump());
  auto cmp = run_archdb(ws.args({"compare", "--flavor", flavor(), "--with", (ws.dir / "peer.json").string()}));
  EXPECT_EQ(cmp.exit_code, 1) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("shared cells: 9; same status: 8"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("ok here, arch_absent there (1)"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("mfma.f32.4x4x4bf16.1k/gfx90a"), std::string::npos) << cmp.out;
  std::string line = cmp.out.substr(cmp.out.find("  mfma.f32.4x4x4bf16.1k/gfx90a"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("here ok ("), std::string::npos) << line;
  EXPECT_NE(line.find("v_mfma_f32_4x4x4bf16_1k"), std::string::npos) << line;
  EXPECT_NE(line.find("there arch_absent (peer: Cannot select this here)"), std::string::npos) << line;
}

TEST(Cli, DiffWithADescriptorIsAnError) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  test::write(ws.dir / "data/llvm20/column.json", test::read(test::source_dir() / "data/llvm20/column.json"));
  for (auto order : {std::vector<std::string>{"diff", flavor(), "llvm20"}, std::vector<std::string>{"diff", "llvm20", flavor()}}) {
    auto r = run_archdb(ws.args(order));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("'llvm20' is not measured: data/llvm20/ is a descriptor"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
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

// JSON nested past what is read, in a committed column or census (100,000 levels killed every reader with
// SIGSEGV): one line naming the file and line, exit 3, never a crash.
TEST(Cli, JsonNestedTooDeepIsOneClearErrorNotACrash) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string cells = test::read(ws.column() / "cells.jsonl");
  test::write(ws.column() / "cells.jsonl", cells.substr(0, cells.find('\n') + 1) + "{\"key\":" + deep + "}\n" +
                                                 cells.substr(cells.find('\n') + 1));
  fs::remove(ws.dir / "db.sqlite");
  auto r = run_archdb(ws.args({"query", "made.up"}));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cells.jsonl:2: JSON nested 100001 levels deep (at most 64 are read)"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  test::write(ws.column() / "cells.jsonl", cells);
  // A census group's detail.
  std::string census = test::read(test::source_dir() / "data/llvm22/census.txt");
  size_t row = census.find("\nllvm.amdgcn.") + 1;
  size_t detail = census.find(" {", census.find('\t', census.find('\t', row) + 1)) + 1;
  census.insert(detail + 1, "\"deep\":" + deep + ",");
  test::write(ws.column() / "census.txt", census);
  fs::remove(ws.dir / "db.sqlite");
  auto c = run_archdb(ws.args({"query", "made.up"}));
  EXPECT_EQ(c.exit_code, 3) << c.err;
  EXPECT_NE(c.err.find("census.txt:"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find(": JSON nested 100001 levels deep"), std::string::npos) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
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

// A database with real content: the committed llvm22 column of this checkout, loaded by a first command.
fs::path loaded_database(const Workspace& ws) {
  for (const char* f : {"column.json", "cells.jsonl"})
    test::write(ws.dir / "data/llvm22" / f, test::read(test::source_dir() / "data/llvm22" / f));
  auto r = run_archdb(ws.args({"runs"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return ws.dir / "db.sqlite";
}

// Commands that read the store's tables but hardly any of the cells.
const std::vector<std::vector<std::string>> kGlanceCommands = {{"runs"}, {"query", "made.up"}};

// Commands that read every cell of the column, and that write (so check the whole file before they do).
std::vector<std::vector<std::string>> whole_file_commands(const Workspace& ws) {
  fs::path peer = ws.dir / "peer.llvm22.json";
  test::write(peer, test::kSmallRockeColumn);
  return {{"export", "--flavor", "llvm22", "--out", (ws.dir / "exported").string()},
          {"import", "--format", "rocke-v1", peer.string()}};
}

// Runs commands on a damaged database: one line naming the file, exit 3, the file untouched.
void expect_refused_and_untouched(const Workspace& ws, const fs::path& db, const std::string& what,
                                  const std::vector<std::vector<std::string>>& commands = kGlanceCommands) {
  std::string before = test::read(db);
  for (const auto& rest : commands) {
    auto r = run_archdb(ws.args(rest));
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.err;
    EXPECT_NE(r.err.find(db.string()), std::string::npos) << what << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << what << ": " << r.err;
  }
  EXPECT_TRUE(test::read(db) == before) << what << ": the file was changed";
}

void overwrite(const fs::path& file, size_t offset, size_t length, uint32_t seed) {
  std::string bytes = test::read(file);
  ASSERT_LE(offset + length, bytes.size());
  std::mt19937 random(seed);
  for (size_t i = offset; i < offset + length; ++i) bytes[i] = static_cast<char>(random() & 0xff);
  test::write(file, bytes);
}

TEST(Cli, TruncatedDatabaseIsOneClearErrorAndIsLeftAlone) {
  for (size_t keep : {size_t{4096}, size_t{100000}, size_t{0}}) {
    Workspace ws;
    fs::path db = loaded_database(ws);
    size_t size = fs::file_size(db);
    ASSERT_GT(size, 300000u) << "the loaded column should fill many pages";
    if (keep == 0) keep = size / 4096 * 2 / 3 * 4096;  // two thirds, on a page boundary
    fs::resize_file(db, keep);
    expect_refused_and_untouched(ws, db, "truncated to " + std::to_string(keep));
  }
}

// Paths that are no database file, and a database damaged by hand (a dropped table, damaged JSON in a stored
// cell): exit 3 naming the path, one line, never "internal error".
TEST(Cli, PathsThatAreNoArchdbDatabaseAreExit3NamingThem) {
  Workspace ws;
  fs::create_symlink("/dev/zero", ws.dir / "zero.sqlite");
  fs::create_directories(ws.dir / "a-folder.sqlite");
  for (const fs::path& db : {fs::path("/proc/version"), ws.dir / "zero.sqlite", ws.dir / "a-folder.sqlite"}) {
    std::vector<std::string> args = ws.args({"query", "made.up"});
    args[1] = db.string();  // --db
    auto r = run_archdb(args);
    EXPECT_EQ(r.exit_code, 3) << db << ": " << r.err;
    EXPECT_NE(r.err.find(db.string() + ": "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }

  auto damaged = [&](const char* sql, const std::string& what) {
    Workspace each;
    fs::path db = loaded_database(each);
    sqlite3* h;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(h, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_close(h);
    auto r = run_archdb(each.args({"query", "mfma.f32.4x4x4bf16.1k", "--flavor", "llvm22"}));
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.err;
    EXPECT_NE(r.err.find(db.string() + ": "), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  damaged("DROP TABLE cell", "the database's tables are damaged");
  // The schema's CHECKs keep JSON valid; a hand that switches them off is what is left.
  damaged("PRAGMA ignore_check_constraints = ON; UPDATE cell SET lowered_to = '[\"v_mfma' WHERE lowered_to IS NOT NULL",
          "the database holds damaged JSON");
  damaged("PRAGMA ignore_check_constraints = ON; UPDATE cell SET lowered_to = '{\"a\": 1}' WHERE lowered_to IS NOT NULL",
          "where a list belongs");
}

TEST(Cli, DatabaseWithItsFirstPageDamagedIsOneClearError) {
  Workspace ws;
  fs::path db = loaded_database(ws);
  overwrite(db, 100, 4096 - 100, 1);  // the header stays intact, the schema's page does not
  expect_refused_and_untouched(ws, db, "page 1 damaged");
}

TEST(Cli, DatabaseWithMiddlePagesDamagedIsOneClearError) {
  {
    Workspace ws;
    fs::path db = loaded_database(ws);
    size_t middle = fs::file_size(db) / 4096 / 2 * 4096;
    overwrite(db, middle, 16 * 4096, 2);
    // A command that never reads the damaged pages may answer (the full check runs before a write, not on
    // every open); one that reads them, or writes, is refused.
    expect_refused_and_untouched(ws, db, "middle pages overwritten", whole_file_commands(ws));
  }
  // Zeroed pages: SQLite's integrity check lists every problem it finds; the message gives the first and
  // their number, on one line.
  Workspace ws;
  fs::path db = loaded_database(ws);
  std::string bytes = test::read(db);
  size_t middle = bytes.size() / 4096 / 2 * 4096;
  std::fill(bytes.begin() + static_cast<long>(middle), bytes.begin() + static_cast<long>(middle + 16 * 4096), '\0');
  test::write(db, bytes);
  expect_refused_and_untouched(ws, db, "middle pages zeroed", whole_file_commands(ws));
  auto r = run_archdb(ws.args(whole_file_commands(ws).back()));
  EXPECT_NE(r.err.find(": database is corrupt (Page "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" problems in all)"), std::string::npos) << r.err;
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


// A read-only look at a workspace's database from the outside, as another process would have it.
class Peek {
 public:
  explicit Peek(const fs::path& db) { sqlite3_open_v2(db.c_str(), &h_, SQLITE_OPEN_READONLY, nullptr); sqlite3_busy_timeout(h_, 5000); }
  ~Peek() { sqlite3_close(h_); }
  std::string one(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(h_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(s, 0);
      out = t ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_finalize(s);
    return out;
  }
  std::string outcome_of(pid_t pid) { return one("SELECT outcome FROM run WHERE pid = " + std::to_string(pid)); }

 private:
  sqlite3* h_ = nullptr;
};

// ---- the probe's outputs, end to end ----

TEST(Cli, KeepIrWritesEachKeysProbeModuleAsValidIr) {
  Workspace ws;
  fs::path ir = ws.dir / "ir";
  auto r = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keep-ir", ir.string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string mfma = test::read(ir / "mfma.f32.4x4x4bf16.1k.ll");
  EXPECT_NE(mfma.find("call <4 x float> @\"llvm.amdgcn.mfma.f32.4x4x4bf16.1k\"("), std::string::npos) << mfma;
  llvm::LLVMContext context;
  llvm::SMDiagnostic diag;
  auto module = llvm::parseAssemblyString(mfma, diag, context);
  ASSERT_TRUE(module) << diag.getMessage().str();
  EXPECT_TRUE(module->getFunction("p0")) << "the probe kernel";
  EXPECT_NE(test::read(ir / "fmuladd.v2f16.ll").find("@\"llvm.fmuladd.v2f16\""), std::string::npos);
  EXPECT_NE(test::read(ir / "made.up.ll").find("; not probed: not an intrinsic"), std::string::npos);
  size_t files = std::distance(fs::directory_iterator(ir), fs::directory_iterator());
  EXPECT_EQ(files, 3u) << "one module per key";
}

TEST(Cli, ProbeErrorCellsFailTheRunAreListedAndNothingIsStored) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string cells = test::read(ws.column() / "cells.jsonl"), before = dump_cells(ws.dir / "db.sqlite");
  // A declaration LLVM reads, which no probe kernel can call with real values: the probe's defect.
  test::write(ws.dir / "catalog.txt", std::string(kSmallCatalog) + "variadic.decl declare float @llvm.fmuladd.f32(float, ...)\n");
  auto r = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  for (const char* t : {"gfx90a", "gfx942", "gfx1201"})
    EXPECT_NE(r.err.find(std::string("archdb: probe_error: variadic.decl/") + t + ": variadic declaration"), std::string::npos)
        << r.err;
  EXPECT_NE(r.err.find("3 cells could not be probed (probe_error); nothing was written"), std::string::npos) << r.err;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), cells);
  EXPECT_EQ(dump_cells(ws.dir / "db.sqlite"), before);
  auto runs = run_archdb(ws.args({"runs", "--limit", "1"}));
  EXPECT_NE(runs.out.find("failed"), std::string::npos) << runs.out;
}

// The line of cells.jsonl for key/target.
std::string cell_line(const std::string& cells, const std::string& key, const std::string& target) {
  std::string needle = "{\"key\":\"" + key + "\",\"target\":\"" + target + "\",";
  size_t at = cells.find(needle);
  if (at == std::string::npos) return "";
  return cells.substr(at, cells.find('\n', at) - at);
}

TEST(Cli, PartialRegenMergesIntoTheCommittedColumnLeavingOtherCellsAsTheyWere) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string measured = test::read(ws.column() / "cells.jsonl"), column = test::read(ws.column() / "column.json");
  // Mark two committed cells (the file stays valid): one inside the partial regen's scope, one outside.
  std::string marked = measured;
  for (const char* target : {"gfx942", "gfx90a"}) {
    std::string line = cell_line(marked, "made.up", target);
    ASSERT_FALSE(line.empty());
    std::string changed = line;
    changed.insert(changed.find("\"evidence\":\"") + 12, "committed earlier: ");
    marked.replace(marked.find(line), line.size(), changed);
  }
  test::write(ws.column() / "cells.jsonl", marked);
  auto r = run_archdb(ws.args({"regen", "--flavor", flavor(), "--only", "made", "--targets", "gfx942"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string merged = test::read(ws.column() / "cells.jsonl");
  // Re-measured: made.up/gfx942 is the probe's answer again. Every other line is the committed one, byte for
  // byte, the marked made.up/gfx90a included.
  EXPECT_EQ(cell_line(merged, "made.up", "gfx942"), cell_line(measured, "made.up", "gfx942"));
  std::string expected = marked;
  std::string in_scope = cell_line(marked, "made.up", "gfx942");
  expected.replace(expected.find(in_scope), in_scope.size(), cell_line(measured, "made.up", "gfx942"));
  EXPECT_EQ(merged, expected);
  EXPECT_EQ(test::read(ws.column() / "column.json"), column) << "the whole column's provenance and counts";
  EXPECT_NE(dump_cells(ws.dir / "db.sqlite").find("committed earlier: "), std::string::npos)
      << "the database holds the merged column";
}

TEST(Cli, RegenKeysMeasuresExactlyThoseKeysAndSaysWhatItChanged) {
  Workspace ws;
  auto first = run_archdb(ws.args({"regen", "--flavor", flavor()}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find(flavor() + ": 9 cells measured in "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(": 9 new, 0 changed, 0 unchanged"), std::string::npos) << first.out;
  std::string measured = test::read(ws.column() / "cells.jsonl");

  // One cell changed behind archdb's back: re-measuring its key says so and puts the answer back.
  std::string line = cell_line(measured, "made.up", "gfx942");
  std::string tampered = line;
  tampered.insert(tampered.find("\"evidence\":\"") + 12, "tampered ");
  std::string marked = measured;
  marked.replace(marked.find(line), line.size(), tampered);
  test::write(ws.column() / "cells.jsonl", marked);
  test::write(ws.dir / "keys.txt", "# the keys to re-measure\n\nmade.up   # a comment\nmade.up\n");
  auto file = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "@" + (ws.dir / "keys.txt").string()}));
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_NE(file.out.find(": 3 cells measured in "), std::string::npos) << "made.up once, on 3 targets: " << file.out;
  EXPECT_NE(file.out.find(": 0 new, 1 changed, 2 unchanged"), std::string::npos) << file.out;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), measured);

  auto two = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "made.up,fmuladd.v2f16", "--check"}));
  EXPECT_EQ(two.exit_code, 0) << two.out << two.err;
  EXPECT_NE(two.out.find("all 6 measured cells reproduce"), std::string::npos) << two.out;

  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  std::string missing = (ws.dir / "no-such-keys.txt").string();
  test::write(ws.dir / "blank.txt", "# nothing\n\n");
  test::write(ws.dir / "two-words.txt", "made.up fmuladd.v2f16\n");
  std::vector<Case> cases = {
      {{"--keys", "made.up,made.upp"}, 2, "--keys: unknown key 'made.upp' (not in the catalog)"},
      {{"--keys", "@" + (ws.dir / "blank.txt").string()}, 2, "blank.txt names no key"},
      {{"--keys", ","}, 2, "--keys names no key"},
      {{"--keys", "@" + missing}, 3, missing + ": cannot read"},
      {{"--keys", "@" + (ws.dir / "two-words.txt").string()}, 3, "two-words.txt: 'made.up fmuladd.v2f16' is not a key"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"regen", "--flavor", flavor()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_archdb(ws.args(args));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.says << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  auto both = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "made.up", "--only", "made"}));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--only excludes --keys"), std::string::npos) << both.err;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), measured) << "no bad argument wrote anything";
}

// The committed columns and a catalog with one key more: coverage fails every measured column, those of
// LLVMs this host lacks included, each naming the command that fills it; the descriptor is one line.
TEST(Cli, CoverageFailsEveryMeasuredColumnLackingAKeyWhateverLlvmThisHostHas) {
  test::TempDir dir;
  fs::path source = test::source_dir();
  std::vector<std::string> measured, descriptors;
  for (const auto& entry : fs::directory_iterator(source / "data")) {
    if (!entry.is_directory()) continue;
    std::string flavor = entry.path().filename();
    fs::create_directories(dir / "data" / flavor);
    for (const char* file : {"column.json", "cells.jsonl"})
      if (fs::exists(entry.path() / file)) fs::copy_file(entry.path() / file, dir / "data" / flavor / file);
    (fs::exists(entry.path() / "cells.jsonl") ? measured : descriptors).push_back(flavor);
  }
  ASSERT_GE(measured.size(), 2u);
  std::string catalog = test::read(source / "schema/catalog.txt");
  test::write(dir / "catalog.txt", catalog + "amdgcn.added.by.a.test   llvm.amdgcn.added.by.a.test\n");
  std::vector<std::string> common = {"--data", (dir / "data").string(), "--targets-file",
                                     (source / "schema/targets.txt").string(), "--db", (dir / "db.sqlite").string()};
  auto coverage = [&](const fs::path& catalog_file) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--catalog", catalog_file.string(), "coverage"});
    return run_archdb(args);
  };

  auto complete = coverage(source / "schema/catalog.txt");
  EXPECT_EQ(complete.exit_code, 0) << complete.out << complete.err;
  auto lacking = coverage(dir / "catalog.txt");
  EXPECT_EQ(lacking.exit_code, 1) << lacking.out << lacking.err;
  for (const auto& f : measured) {
    std::string want = f + ": FAIL; keys not measured: amdgcn.added.by.a.test; fill it with: "
                       "tools/regen-columns --only amdgcn.added.by.a.test " + f + "\n";
    EXPECT_NE(lacking.out.find(want), std::string::npos) << want << "in:\n" << lacking.out;
  }
  for (const auto& f : descriptors) {
    size_t at = lacking.out.find(f + ": SKIP, a descriptor");
    ASSERT_NE(at, std::string::npos) << lacking.out;
    std::string line = lacking.out.substr(at, lacking.out.find('\n', at) - at);
    EXPECT_EQ(line.find("amdgcn."), std::string::npos) << "a count, not the keys: " << line;
  }
  std::string tail = std::to_string(measured.size()) + " failing, " + std::to_string(descriptors.size()) + " skipped";
  EXPECT_NE(lacking.out.find(tail), std::string::npos) << lacking.out;
}

TEST(Cli, WorkerCountFollowsTheCpuAffinity) {
  Workspace ws;
  std::vector<std::string> pinned = {"/usr/bin/taskset", "-c", "0", ARCHDB_BINARY};
  for (auto& a : ws.args({"regen", "--flavor", flavor(), "--only", "made"})) pinned.push_back(a);
  auto r = test::run_command(pinned);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(1 workers,"), std::string::npos) << r.out;
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "this process may use one CPU only: the unpinned count is 1 as well";
  std::vector<std::string> two = {"/usr/bin/taskset", "-c", "0,1", ARCHDB_BINARY};
  for (auto& a : ws.args({"regen", "--flavor", flavor(), "--only", "made"})) two.push_back(a);
  auto both = test::run_command(two);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("(2 workers,"), std::string::npos) << both.out;
}

// ---- user paths and arguments ----

TEST(Cli, UnwritablePathsAreOneLineInputErrorsAndCloseTheRun) {
  Workspace ws;
  auto keep = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keep-ir", "/dev/null/x"}));
  EXPECT_EQ(keep.exit_code, 3) << keep.err;
  EXPECT_NE(keep.err.find("/dev/null/x"), std::string::npos) << keep.err;
  EXPECT_EQ(std::count(keep.err.begin(), keep.err.end(), '\n'), 1) << keep.err;
  Peek peek(ws.dir / "db.sqlite");
  EXPECT_EQ(peek.one("SELECT outcome FROM run ORDER BY id DESC LIMIT 1"), "failed");
  EXPECT_NE(peek.one("SELECT message FROM run ORDER BY id DESC LIMIT 1").find("/dev/null/x"), std::string::npos);
  EXPECT_FALSE(fs::exists(ws.column()));

  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  fs::create_directories(ws.dir / "a-folder");
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  std::vector<Case> cases = {
      {{"export", "--flavor", flavor(), "--out", "/dev/null/x"}, "/dev/null/x"},
      {{"export", "--flavor", flavor(), "--out", (ws.dir / "no/such/parent").string()}, "no/such/parent"},
      {{"export", "--flavor", flavor(), "--out", (ws.dir / "catalog.txt").string()}, "catalog.txt: not a folder"},
      {{"export", "--format", "rocke-v1", "--flavor", flavor(), "--out", (ws.dir / "a-folder").string()}, "a-folder: is a folder"},
      {{"export", "--format", "rocke-v1", "--flavor", flavor(), "--out", (ws.dir / "none/x.json").string()}, "none/x.json"},
      {{"export", "--format", "rocke-v1", "--flavor", flavor(), "--out", "/dev/null/x.json"}, "/dev/null/x.json"},
  };
  for (const auto& c : cases) {
    auto r = run_archdb(ws.args(c.args));
    EXPECT_EQ(r.exit_code, 3) << c.names << ": " << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Cli, ArgumentChecks) {
  Workspace ws;
  for (const char* jobs : {"0", "-1"}) {
    auto r = run_archdb(ws.args({"regen", "--flavor", flavor(), "--jobs", jobs}));
    EXPECT_EQ(r.exit_code, 2) << jobs;
    EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
  }
  auto twice = run_archdb(ws.args({"regen", "--flavor", flavor(), "--targets", "gfx90a,gfx942,gfx90a"}));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--targets names 'gfx90a' twice"), std::string::npos) << twice.err;
  auto none = run_archdb(ws.args({"regen", "--flavor", flavor(), "--targets", ","}));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--targets names no target"), std::string::npos) << none.err;
  auto unknown = run_archdb(ws.args({"nosuchcmd"}));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown subcommand 'nosuchcmd'"), std::string::npos) << unknown.err;
  EXPECT_FALSE(fs::exists(ws.dir / "db.sqlite")) << "nothing ran";
  auto plain = run_archdb({"nosuchcmd"});
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.err.find("unknown subcommand 'nosuchcmd'"), std::string::npos) << plain.err;
}

TEST(Cli, RecoveryLeavesTheStagingFolderOfALiveWriterAlone) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string cells = test::read(ws.column() / "cells.jsonl");
  // A writer still at work (this test process), and one that is gone (a child that has exited).
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  fs::path data = ws.dir / "data";
  fs::path live_staged = data / ("." + flavor() + ".staged-" + std::to_string(::getpid()));
  fs::path dead_staged = data / ("." + flavor() + ".staged-" + std::to_string(gone));
  for (const auto& p : {live_staged, dead_staged}) test::write(p / "column.json", "{ half written");
  auto r = run_archdb(ws.args({"runs"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(live_staged / "column.json")) << "another command removed a live writer's staging folder";
  EXPECT_FALSE(fs::exists(dead_staged)) << "a dead writer's staging folder was not recovered";
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), cells);

  // A writer killed between moving the old column aside and putting the new one in place: the old one goes
  // back, unless that writer is still running.
  fs::path live_backup = data / ("." + flavor() + ".old-" + std::to_string(::getpid()));
  fs::rename(ws.column(), live_backup);
  ASSERT_EQ(run_archdb(ws.args({"runs"})).exit_code, 0);
  EXPECT_TRUE(fs::exists(live_backup / "cells.jsonl")) << "a live writer's backup was touched";
  EXPECT_FALSE(fs::exists(ws.column()));
  fs::path dead_backup = data / ("." + flavor() + ".old-" + std::to_string(gone));
  fs::rename(live_backup, dead_backup);
  auto q = run_archdb(ws.args({"query", "made.up"}));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), cells);
  EXPECT_FALSE(fs::exists(dead_backup));
  fs::remove_all(live_staged);
}

// ---- kill -9 during a regeneration ----

// Starts archdb without waiting; its output goes nowhere, its stderr to `err` if given.
pid_t spawn_archdb(const std::vector<std::string>& args, const fs::path& err = "/dev/null") {
  std::vector<std::string> argv = {ARCHDB_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn_child(argv, {{}, {}, ChildStream::file(err.string())});
}

// Two writers of one column at once, as two people regenerating different keys on one checkout would. This
// test holds the column's lock while both start, so that both are in the race for certain; then lets go. Each
// must wait (saying so), and the one that goes second must merge into what the first wrote: both runs' cells
// survive.
TEST(Cli, TwoWritersOfOneColumnAtOnceLoseNoCell) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string measured = test::read(ws.column() / "cells.jsonl");
  std::string marked = measured;
  for (auto [key, target] : {std::pair{"made.up", "gfx942"}, std::pair{"mfma.f32.4x4x4bf16.1k", "gfx1201"}}) {
    std::string line = cell_line(marked, key, target), changed = line;
    ASSERT_NE(changed.find("\"evidence\":\""), std::string::npos) << line;
    changed.insert(changed.find("\"evidence\":\"") + 12, "stale ");
    marked.replace(marked.find(line), line.size(), changed);
  }
  test::write(ws.column() / "cells.jsonl", marked);

  fs::path lock = ws.dir / "data" / ("." + flavor() + ".write-lock");
  int held = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  ASSERT_EQ(::write(held, "4242\n", 5), 5);

  pid_t one = spawn_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "made.up"}), ws.dir / "one.err");
  pid_t two = spawn_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "mfma.f32.4x4x4bf16.1k"}), ws.dir / "two.err");
  ASSERT_GT(one, 0);
  ASSERT_GT(two, 0);
  const std::string waiting = "is being written by another archdb (pid 4242); waiting for it";
  for (int i = 0; i < 3000; ++i) {
    if (test::read(ws.dir / "one.err").find(waiting) != std::string::npos &&
        test::read(ws.dir / "two.err").find(waiting) != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(test::read(ws.dir / "one.err").find(waiting), std::string::npos) << test::read(ws.dir / "one.err");
  EXPECT_NE(test::read(ws.dir / "two.err").find(waiting), std::string::npos) << test::read(ws.dir / "two.err");
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), marked) << "nothing is written while the column is held";
  ::close(held);  // lets them go

  int status_one = 0, status_two = 0;
  waitpid(one, &status_one, 0);
  waitpid(two, &status_two, 0);
  EXPECT_TRUE(WIFEXITED(status_one) && WEXITSTATUS(status_one) == 0) << test::read(ws.dir / "one.err");
  EXPECT_TRUE(WIFEXITED(status_two) && WEXITSTATUS(status_two) == 0) << test::read(ws.dir / "two.err");
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), measured) << "both runs' answers, nothing stale left";
}

// An export that starts while a regeneration holds the column must read the column the regeneration wrote:
// reading it first and waiting only to write would put the stale copy back over the new one. This test holds
// the column's lock, starts two exports (into data/ and into another folder), changes the column as a
// regeneration would (its files; the database follows them), and lets go.
TEST(Cli, AnExportWaitingForARegenerationReadsWhatTheRegenerationWrote) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string measured = test::read(ws.column() / "cells.jsonl");
  std::string line = cell_line(measured, "made.up", "gfx942"), changed = line;
  ASSERT_NE(changed.find("\"evidence\":\""), std::string::npos) << line;
  changed.insert(changed.find("\"evidence\":\"") + 12, "rewritten meanwhile: ");
  std::string rewritten = measured;
  rewritten.replace(rewritten.find(line), line.size(), changed);

  fs::path lock = ws.dir / "data" / ("." + flavor() + ".write-lock");
  int held = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  ASSERT_EQ(::write(held, "4242\n", 5), 5);
  fs::create_directories(ws.dir / "elsewhere");
  pid_t home = spawn_archdb(ws.args({"export", "--flavor", flavor()}), ws.dir / "home.err");
  pid_t away = spawn_archdb(ws.args({"export", "--flavor", flavor(), "--out", (ws.dir / "elsewhere").string()}),
                            ws.dir / "away.err");
  ASSERT_GT(home, 0);
  ASSERT_GT(away, 0);
  const std::string waiting = "is being written by another archdb (pid 4242); waiting for it";
  for (int i = 0; i < 3000; ++i) {
    if (test::read(ws.dir / "home.err").find(waiting) != std::string::npos &&
        test::read(ws.dir / "away.err").find(waiting) != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(test::read(ws.dir / "home.err").find(waiting), std::string::npos) << test::read(ws.dir / "home.err");
  EXPECT_NE(test::read(ws.dir / "away.err").find(waiting), std::string::npos) << test::read(ws.dir / "away.err");
  test::write(ws.column() / "cells.jsonl", rewritten);  // the regeneration's write, while it holds the column
  ::close(held);

  int status_home = 0, status_away = 0;
  waitpid(home, &status_home, 0);
  waitpid(away, &status_away, 0);
  EXPECT_TRUE(WIFEXITED(status_home) && WEXITSTATUS(status_home) == 0) << test::read(ws.dir / "home.err");
  EXPECT_TRUE(WIFEXITED(status_away) && WEXITSTATUS(status_away) == 0) << test::read(ws.dir / "away.err");
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), rewritten) << "the export wrote back what it read before";
  EXPECT_EQ(test::read(ws.dir / "elsewhere" / flavor() / "cells.jsonl"), rewritten) << "the copy is stale";
}

// A regeneration whose files cannot be written (a full disk: data/ on a tmpfs filled to the last page, in a
// mount namespace of its own) fails, is recorded failed with the reason, and leaves the committed column and
// the database as they were.
TEST(Cli, ARegenerationThatCannotWriteItsFilesIsRecordedFailedAndChangesNothing) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string committed = test::read(ws.column() / "cells.jsonl");
  std::string cells_before = dump_cells(ws.dir / "db.sqlite");
  auto probe = test::run_command({"/usr/bin/unshare", "-m", "true"});
  if (probe.exit_code != 0) GTEST_SKIP() << "no mount namespace here (unshare -m: " << probe.err << ")";

  fs::path full = ws.dir / "full-data", after = ws.dir / "after";
  fs::create_directories(full);
  fs::create_directories(after);
  std::string command;
  for (const auto& a : ws.args({"regen", "--flavor", flavor(), "--keys", "made.up"})) {
    std::string arg = a == (ws.dir / "data").string() ? full.string() : a;
    command += " '" + arg + "'";
  }
  // Mount, copy the column in, fill every page left; run; keep what the folder holds after it.
  std::string script = "set -e; mount -t tmpfs -o size=256k tmpfs '" + full.string() + "'; cp -a '" +
                       (ws.dir / "data").string() + "/.' '" + full.string() + "/'; dd if=/dev/zero of='" +
                       full.string() + "/filler' bs=4k 2>/dev/null || true; set +e; '" + ARCHDB_BINARY + "'" + command +
                       " 2>'" + (after / "err").string() + "'; echo $? > '" + (after / "rc").string() + "'; cp '" +
                       full.string() + "/" + flavor() + "/cells.jsonl' '" + (after / "cells.jsonl").string() +
                       "'; ls -a '" + full.string() + "' > '" + (after / "ls").string() + "'";
  auto r = test::run_command({"/usr/bin/unshare", "-m", "/bin/sh", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string err = test::read(after / "err");
  EXPECT_EQ(test::read(after / "rc"), "3\n") << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(test::read(after / "cells.jsonl"), committed) << "the committed column changed";
  EXPECT_EQ(test::read(after / "ls").find(".staged-"), std::string::npos) << "left behind:\n" << test::read(after / "ls");
  EXPECT_EQ(dump_cells(ws.dir / "db.sqlite"), cells_before) << "the database took a column whose files failed";
  Peek peek(ws.dir / "db.sqlite");
  EXPECT_EQ(peek.one("SELECT outcome FROM run ORDER BY id DESC LIMIT 1"), "failed");
  EXPECT_NE(peek.one("SELECT message FROM run ORDER BY id DESC LIMIT 1").find("No space left on device"),
            std::string::npos);
}

// A partial regeneration under a targets file that no longer wires one of the column's targets keeps that
// target's cells as committed: the column it writes loads into a fresh database.
TEST(Cli, APartialRegenerationKeepsATargetTheTargetsFileNoLongerWires) {
  Workspace ws;
  ASSERT_EQ(run_archdb(ws.args({"regen", "--flavor", flavor()})).exit_code, 0);
  std::string measured = test::read(ws.column() / "cells.jsonl");
  test::write(ws.dir / "targets.txt", "gfx90a\ngfx942\n");
  auto r = run_archdb(ws.args({"regen", "--flavor", flavor(), "--keys", "made.up"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": 2 cells measured in "), std::string::npos) << r.out;
  EXPECT_EQ(test::read(ws.column() / "cells.jsonl"), measured);
  EXPECT_NE(test::read(ws.column() / "column.json").find("gfx1201"), std::string::npos);
  std::vector<std::string> fresh = ws.args({"query", "made.up", "--flavor", flavor()});
  fresh[1] = (ws.dir / "fresh.sqlite").string();
  auto q = run_archdb(fresh);
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("gfx1201"), std::string::npos) << q.out;
}

// What a column is in a workspace: its files in data/ and its cells in the database.
struct ColumnState {
  std::string files, cells;
  bool operator==(const ColumnState& o) const { return files == o.files && cells == o.cells; }
};

std::string column_files(const fs::path& dir) {
  std::string out;
  std::vector<fs::path> names;
  if (fs::is_directory(dir))
    for (auto& e : fs::directory_iterator(dir)) names.push_back(e.path());
  std::sort(names.begin(), names.end());
  for (auto& p : names) out += p.filename().string() + "\n" + test::read(p) + "\n";
  return out;
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

#if defined(__x86_64__)
// A file operation of archdb's main process on the workspace, seen from outside with ptrace (as a debugger
// sees it) at the entry of its system call, before the kernel carries it out.
struct FileEvent {
  std::string call, path;
};

std::string tracee_string(pid_t pid, unsigned long long address) {
  std::string out;
  char chunk[256];
  while (out.size() < 4096) {
    iovec local{chunk, sizeof chunk}, remote{reinterpret_cast<void*>(address + out.size()), sizeof chunk};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) break;
    size_t len = strnlen(chunk, static_cast<size_t>(n));
    out.append(chunk, len);
    if (len < static_cast<size_t>(n)) break;
  }
  return out;
}

std::string tracee_fd_path(pid_t pid, long long fd) {
  std::error_code ec;
  if (fd == AT_FDCWD) return fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec).string();
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec).string();
}

std::optional<FileEvent> file_event(pid_t pid, const user_regs_struct& r) {
  auto at_path = [&](long long dirfd, unsigned long long address) {
    std::string p = tracee_string(pid, address);
    return p.empty() || p[0] == '/' ? p : tracee_fd_path(pid, dirfd) + "/" + p;
  };
  switch (r.orig_rax) {
    case SYS_write: return FileEvent{"write", tracee_fd_path(pid, static_cast<long long>(r.rdi))};
    case SYS_pwrite64: return FileEvent{"pwrite", tracee_fd_path(pid, static_cast<long long>(r.rdi))};
    case SYS_fsync: return FileEvent{"fsync", tracee_fd_path(pid, static_cast<long long>(r.rdi))};
    case SYS_fdatasync: return FileEvent{"fdatasync", tracee_fd_path(pid, static_cast<long long>(r.rdi))};
    case SYS_ftruncate: return FileEvent{"ftruncate", tracee_fd_path(pid, static_cast<long long>(r.rdi))};
    case SYS_mkdir: return FileEvent{"mkdir", at_path(AT_FDCWD, r.rdi)};
    case SYS_mkdirat: return FileEvent{"mkdir", at_path(static_cast<int>(r.rdi), r.rsi)};
    case SYS_rename: return FileEvent{"rename", at_path(AT_FDCWD, r.rdi) + " -> " + at_path(AT_FDCWD, r.rsi)};
    case SYS_renameat:
    case SYS_renameat2:
      return FileEvent{r.orig_rax == SYS_renameat2 && (r.r8 & RENAME_EXCHANGE) ? "exchange" : "rename",
                       at_path(static_cast<int>(r.rdi), r.rsi) + " -> " + at_path(static_cast<int>(r.rdx), r.r10)};
    case SYS_unlink: return FileEvent{"unlink", at_path(AT_FDCWD, r.rdi)};
    case SYS_rmdir: return FileEvent{"rmdir", at_path(AT_FDCWD, r.rdi)};
    case SYS_unlinkat: return FileEvent{"unlink", at_path(static_cast<int>(r.rdi), r.rsi)};
    case SYS_openat:
      if (r.rdx & O_CREAT) return FileEvent{"create", at_path(static_cast<int>(r.rdi), r.rsi)};
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Runs archdb with `args` under ptrace. At each file operation of its main process under `root`, asks
// `kill_before(index, event)`: true kills it there, before the operation happens. Returns the wait status.
int traced_archdb(const std::vector<std::string>& args, const fs::path& root,
                  const std::function<bool(size_t, const FileEvent&)>& kill_before) {
  std::vector<std::string> argv_s = {ARCHDB_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);  // stopped at its exec
  ptrace(PTRACE_SETOPTIONS, pid, nullptr,
         reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC));
  const std::string prefix = root.string() + "/";
  size_t index = 0;
  bool entering = true;
  int deliver = 0;
  for (;;) {
    ptrace(PTRACE_SYSCALL, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(deliver)));
    deliver = 0;
    if (waitpid(pid, &status, 0) < 0 || WIFEXITED(status) || WIFSIGNALED(status)) return status;
    if (!WIFSTOPPED(status)) continue;
    int sig = WSTOPSIG(status);
    if (sig == (SIGTRAP | 0x80)) {
      if (entering) {
        user_regs_struct regs;
        ptrace(PTRACE_GETREGS, pid, nullptr, &regs);
        auto e = file_event(pid, regs);
        if (e && e->path.find(prefix) != std::string::npos && kill_before(index++, *e)) {
          ::kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          return status;
        }
      }
      entering = !entering;
    } else if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_EXEC) {
      entering = false;  // the exec's own exit stop comes next
    } else if (sig != SIGTRAP) {
      deliver = sig;  // the workers' SIGCHLD, the probe's alarms: theirs, not ours
    }
  }
}
#endif

TEST(Cli, KillDuringRegenLeavesTheOldColumnOrTheNewOneWhole) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the kill points are found with ptrace, written for x86-64";
#else
  // The committed column is measured from catalog A; each attempt regenerates it from catalog B (one key
  // more) and is killed at another moment: while measuring, and before each file operation of the
  // regeneration from the transaction that stores the new column to the end (the folder swap included).
  Workspace seed;
  test::write(seed.dir / "b.txt", std::string(kSmallCatalog) + "fmuladd.f32 llvm.fmuladd[float]\n");
  ASSERT_EQ(run_archdb(seed.args({"regen", "--flavor", flavor()})).exit_code, 0);
  const fs::path tmpl = seed.dir / "template";
  copy_tree(seed.dir / "data", tmpl / "data");
  fs::copy_file(seed.dir / "db.sqlite", tmpl / "db.sqlite");
  ASSERT_FALSE(fs::exists(seed.dir / "db.sqlite-wal")) << "the seeding run left its log";

  auto globals = [&](const fs::path& at) {
    return std::vector<std::string>{"--db", (at / "db.sqlite").string(), "--data", (at / "data").string(), "--catalog",
                                    (seed.dir / "b.txt").string(), "--targets-file", (seed.dir / "targets.txt").string()};
  };
  auto regen_b = [&](const fs::path& at) {
    auto a = globals(at);
    for (const auto& w : {std::string("regen"), std::string("--flavor"), flavor()}) a.push_back(w);
    return a;
  };
  auto state_of = [&](const fs::path& at) {
    return ColumnState{column_files(at / "data" / flavor()), dump_cells(at / "db.sqlite")};
  };
  const ColumnState old_state = state_of(tmpl);

  // A whole run, traced: its file operations in order. The window starts with the staging of the new
  // folder and runs to the end: the swap, then the one transaction that stores the column and closes the run.
  fs::path reference = seed.dir / "reference";
  copy_tree(tmpl, reference);
  std::vector<FileEvent> events;
  int ref_status = traced_archdb(regen_b(reference), reference, [&](size_t, const FileEvent& e) {
    events.push_back(e);
    return false;
  });
  ASSERT_TRUE(WIFEXITED(ref_status) && WEXITSTATUS(ref_status) == 0);
  const ColumnState new_state = state_of(reference);
  ASSERT_NE(old_state.files, new_state.files);
  ASSERT_NE(old_state.cells, new_state.cells);
  const std::string staged = "/." + flavor() + ".staged-";
  size_t staging = 0;
  while (staging < events.size() && events[staging].path.find(staged) == std::string::npos) ++staging;
  ASSERT_LT(staging, events.size()) << "the run staged no folder";
  // The swap: the staged folder exchanged with the column's, or renamed to it.
  auto is_swap = [&](const FileEvent& e) {
    size_t arrow = e.path.find(" -> ");
    return e.call == "exchange" || (e.call == "rename" && arrow != std::string::npos &&
                                    e.path.substr(0, arrow).find(staged) != std::string::npos &&
                                    e.path.substr(arrow).find(staged) == std::string::npos);
  };
  size_t swap = staging;
  while (swap < events.size() && !is_swap(events[swap])) ++swap;
  ASSERT_LT(swap, events.size()) << "the staged folder never took the column's place";
  size_t commit = swap;
  while (commit < events.size() && events[commit].path.find("db.sqlite") == std::string::npos) ++commit;
  ASSERT_LT(commit, events.size()) << "no database write follows the swap";

  std::vector<size_t> kill_points;  // kMeasuring is SIZE_MAX
  kill_points.push_back(SIZE_MAX);
  for (size_t i = staging; i < events.size(); ++i) kill_points.push_back(i);
  int before_swap = 0, between = 0, after_commit = 0;
  for (size_t n = 0; n < kill_points.size(); ++n) {
    const size_t point = kill_points[n];
    std::string where = point == SIZE_MAX ? "while measuring"
                                          : "before " + events[point].call + " " + events[point].path.substr(seed.dir.path().string().size());
    SCOPED_TRACE("attempt " + std::to_string(n) + ": " + where);
    fs::path dir = seed.dir / ("attempt" + std::to_string(n));
    copy_tree(tmpl, dir);
    int status = 0;
    pid_t pid = 0;
    if (point == SIZE_MAX) {
      // Killed once the run is recorded: the probe is measuring.
      pid = spawn_archdb(regen_b(dir));
      ASSERT_GT(pid, 0);
      Peek peek(dir / "db.sqlite");
      for (int i = 0; i < 30000 && peek.outcome_of(pid) != "running" && waitpid(pid, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ::kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    } else {
      // The same operations happen in the same order in every run on the same files (the log's frames
      // are written anew): kill before the point-th. The paths name this attempt's folder.
      status = traced_archdb(regen_b(dir), dir, [&](size_t i, const FileEvent&) { return i == point; });
    }
    ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";

    // Right after the kill: the database is whole, and each of it and data/ holds one column whole.
    {
      Peek peek(dir / "db.sqlite");
      EXPECT_EQ(peek.one("PRAGMA integrity_check"), "ok");
    }
    ColumnState after = state_of(dir);
    bool db_new = after.cells == new_state.cells, files_new = after.files == new_state.files;
    EXPECT_TRUE(db_new || after.cells == old_state.cells) << "the database holds half a column";
    EXPECT_TRUE(files_new || after.files == old_state.files) << "data/ holds half a column:\n" << after.files;
    EXPECT_FALSE(db_new && !files_new) << "the database committed the run before its files were in place";
    if (point == SIZE_MAX) {
      EXPECT_FALSE(files_new) << "killed while measuring, yet the new column is written";
    }
    (!files_new ? before_swap : !db_new ? between : after_commit)++;

    // The next command recovers: the database follows data/, no staging folder is left, and a run killed
    // before its commit is recorded as interrupted (its files may be in place; it never said `ok`).
    auto runs_args = globals(dir);
    runs_args.push_back("runs");
    auto runs = run_archdb(runs_args);
    ASSERT_EQ(runs.exit_code, 0) << runs.err;
    ColumnState recovered = state_of(dir);
    EXPECT_TRUE(recovered == (files_new ? new_state : old_state)) << "the database does not follow data/";
    for (auto& e : fs::directory_iterator(dir / "data")) {
      if (e.path().filename() == "." + flavor() + ".write-lock") continue;  // the column's lock stays, unheld
      EXPECT_EQ(e.path().filename(), flavor()) << "left behind: " << e.path();
    }
    Peek peek(dir / "db.sqlite");
    EXPECT_EQ(peek.one("SELECT count(*) FROM run WHERE outcome = 'running'"), "0");
    EXPECT_EQ(peek.one("SELECT outcome FROM run ORDER BY id DESC LIMIT 1"), db_new ? "ok" : "interrupted");
    fs::remove_all(dir);
  }
  // Each of the three outcomes was met: killed before the swap, between the swap and the commit, after it.
  EXPECT_GE(before_swap, 2);
  EXPECT_GE(between, 2);
  EXPECT_GE(after_commit, 1);
  std::printf("%zu kill points: %d before the swap, %d between it and the commit, %d after the commit\n",
              kill_points.size(), before_swap, between, after_commit);
  if (HasFailure())
    for (size_t i = 0; i < events.size(); ++i)
      std::printf("%3zu %s %s %s\n", i, i == swap ? "swap>  " : i == commit ? "commit>" : "       ", events[i].call.c_str(),
                  events[i].path.c_str());
#endif
}

// The command-line reference (docs/cli.md) is held to `--help`: every subcommand has a row, and every option its
// --help lists is named in that row.
std::vector<std::string> help_section(const std::string& help, const std::string& heading, const std::regex& item) {
  std::vector<std::string> out;
  size_t at = help.find("\n" + heading + ":\n");
  if (at == std::string::npos) return out;
  size_t end = help.find("\n\n", at + 1);
  std::string section = help.substr(at, end == std::string::npos ? std::string::npos : end - at);
  for (std::sregex_iterator it(section.begin(), section.end(), item), e; it != e; ++it) out.push_back((*it)[1]);
  return out;
}

TEST(Cli, TheReferenceDocumentsEverySubcommandAndItsOptions) {
  const std::regex subcommand(R"(\n  ([a-z][a-z-]*)  )");
  const std::regex option(R"(\n  (?:-\w,)?(--[a-z][a-z0-9-]*))");
  std::vector<std::string> rows;
  std::istringstream doc(test::read(test::source_dir() / "docs" / "cli.md"));
  for (std::string line; std::getline(doc, line);)
    if (line.rfind("| `", 0) == 0) rows.push_back(line);
  auto top = test::run_archdb({"--help"});
  ASSERT_EQ(top.exit_code, 0);
  std::vector<std::vector<std::string>> commands;
  for (const auto& name : help_section(top.out, "Subcommands", subcommand)) {
    auto help = test::run_archdb({name, "--help"});
    auto nested = help_section(help.out, "Subcommands", subcommand);
    if (nested.empty()) commands.push_back({name});
    for (const auto& n : nested) commands.push_back({name, n});
  }
  ASSERT_GT(commands.size(), 25u);
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.push_back("--help");
    auto help = test::run_archdb(args);
    std::string name = command.size() == 1 ? command[0] : command[0] + " " + command[1];
    std::string row;
    for (const auto& r : rows)
      if (r.rfind("| `" + name + " ", 0) == 0 || r.rfind("| `" + name + "`", 0) == 0) row += r;
    EXPECT_FALSE(row.empty()) << "docs/cli.md has no row for `archdb " << name << "`";
    std::vector<std::string> options = help_section(help.out, "Options", option);
    for (const auto& o : help_section(help.out, "Partial", option)) options.push_back(o);
    for (const auto& o : options) {
      if (o == "--help") continue;
      EXPECT_NE(row.find(o), std::string::npos) << "docs/cli.md's row for " << name << " does not name " << o;
    }
  }
}

}  // namespace
}  // namespace archdb
