// tests/history_test.cpp — reading across flavors: history summaries (non-answers stay unknowns), diff
// groups, and rocKE's column format (the peer's three files import; ours round-trips; bad files refused).
#include <algorithm>

#include <gtest/gtest.h>

#include "db/history.h"
#include "db/rocke.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;

Cell cell(Status s, const std::string& evidence = "why") {
  Cell c;
  c.key = "k";
  c.target = "gfx90a";
  c.status = s;
  c.intrinsic = "llvm.amdgcn.k";
  if (s != Status::kOk) c.evidence = evidence;
  return c;
}

std::string summary(const std::vector<std::pair<std::string, const Cell*>>& seq) {
  std::vector<FlavorCell> row;
  for (const auto& [f, c] : seq) row.push_back({f, false, c});
  return history_summary(row);
}

TEST(History, SummariesInTheMannerOfBrowserCompatData) {
  Cell ok = cell(Status::kOk), absent = cell(Status::kArchAbsent), name = cell(Status::kNameAbsent),
       unsupported = cell(Status::kTargetUnsupported), crash = cell(Status::kToolchainCrash);
  EXPECT_EQ(summary({{"llvm21", &name}, {"llvm22", &ok}, {"llvm23", &ok}}),
            "not lowered in llvm21 (name_absent); ok since llvm22");
  EXPECT_EQ(summary({{"llvm22", &ok}, {"llvm23", &name}}), "ok in llvm22; removed in llvm23 (name_absent)");
  EXPECT_EQ(summary({{"llvm19", &unsupported}, {"llvm21", &ok}}),
            "unknown before llvm21 (target_unsupported); ok since llvm21");
  // A crash is no answer: it never turns into "not lowered", and a gap does not split an answer.
  EXPECT_EQ(summary({{"llvm19", &ok}, {"llvm20", nullptr}, {"llvm21", &ok}}), 
            "ok in every measured column (llvm19 to llvm21) (llvm20: not measured)");
  EXPECT_EQ(summary({{"llvm22", &crash}, {"llvm23", &crash}}), "unknown (toolchain_crash)");
  EXPECT_EQ(summary({{"llvm22", &absent}, {"llvm23", &crash}, {"llvm24", &ok}}),
            "not lowered in llvm22 (arch_absent); unknown in llvm23 (toolchain_crash); ok since llvm24");
  // Imported columns are shown, never evidence.
  std::vector<FlavorCell> row = {{"llvm22", false, &ok}, {"rocke-v1:llvm23", true, &absent}};
  EXPECT_EQ(history_summary(row), "ok in every measured column (llvm22)");
}

TEST(History, FlavorsSortByMajorImportedLast) {
  std::vector<std::string> f = {"rocke-v1:llvm20", "llvm22", "llvm9", "llvm19"};
  std::sort(f.begin(), f.end(), flavor_before);
  EXPECT_EQ(f, (std::vector<std::string>{"llvm9", "llvm19", "llvm22", "rocke-v1:llvm20"}));
}

TEST(Diff, ChangesAreGroupedByHow) {
  Cell ok = cell(Status::kOk), absent = cell(Status::kArchAbsent), name = cell(Status::kNameAbsent),
       unsupported = cell(Status::kTargetUnsupported), crash = cell(Status::kToolchainCrash);
  EXPECT_EQ(change_group(absent, ok), "became ok");
  EXPECT_EQ(change_group(ok, absent), "became absent");
  EXPECT_EQ(change_group(name, ok), "name appeared");
  EXPECT_EQ(change_group(ok, name), "name vanished");
  EXPECT_EQ(change_group(absent, crash), "crash appeared");
  EXPECT_EQ(change_group(crash, absent), "crash fixed");
  EXPECT_EQ(change_group(unsupported, ok), "target appeared");
  Cell lowered = ok;
  lowered.lowered_to = {"v_new"};
  EXPECT_EQ(change_group(ok, lowered), "lowering changed");
  EXPECT_EQ(change_group(ok, ok), "");
  // Only the waits, nops and moves around the call changed: churn, apart from a change of the call's instruction.
  Cell before = ok, waits = ok, other = ok;
  before.lowered_to = {"s_nop", "v_mfma_f32_4x4x4bf16_1k", "s_waitcnt"};
  waits.lowered_to = {"v_mov_b32_e32", "v_mfma_f32_4x4x4bf16_1k", "s_wait_loadcnt", "s_nop"};
  other.lowered_to = {"s_nop", "v_mfma_f32_4x4x4_16b_bf16", "s_waitcnt"};
  EXPECT_EQ(change_group(before, waits), "lowering churn");
  EXPECT_EQ(change_group(before, other), "lowering changed");
  Cell reposed = waits;
  reposed.posed = CallPosing{};
  reposed.posed->imm = {1};
  EXPECT_EQ(change_group(waits, reposed), "lowering changed") << "a posing that changed is not churn";
  EXPECT_EQ(change_groups().back(), "other");
  EXPECT_LT(std::find(change_groups().begin(), change_groups().end(), "lowering changed"),
            std::find(change_groups().begin(), change_groups().end(), "lowering churn"));
}

fs::path rocke_dir() { return test::source_dir() / ".." / "shared" / "reference" / "rocke-columns"; }

TEST(Rocke, ThePeersThreeFilesImport) {
  if (!fs::exists(rocke_dir())) GTEST_SKIP() << "rocKE reference columns not found at " << rocke_dir();
  for (const char* flavor : {"llvm20", "llvm22", "llvm23"}) {
    fs::path file = rocke_dir() / (std::string("intrinsic_arch_domain.") + flavor + ".json");
    RockeColumn col = parse_rocke(test::read(file), file.string());
    EXPECT_EQ(col.flavor, flavor);
    EXPECT_EQ(col.arches.size(), 7u);
    EXPECT_EQ(col.cells.size(), 167u * 7u) << flavor;
    for (const auto& c : col.cells) EXPECT_TRUE(c.status == Status::kOk || !c.evidence.empty()) << c.key;
  }
}

TEST(Rocke, MalformedAndMislabelledFilesAreRefused) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_rocke(text, "peer.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kExitBadInput);
      return e.what();
    }
    return "";
  };
  std::string good = test::kSmallRockeColumn;
  EXPECT_EQ(error_of(good), "");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_NE(error_of("{oops").find("peer.json: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(with("rocke.intrinsic_arch_domain/v1", "other/v9")).find("schema is 'other/v9'"), std::string::npos);
  EXPECT_NE(error_of(with("\"verified_on\": \"llvm22\", \"evidence\"", "\"verified_on\": \"llvm23\", \"evidence\""))
                .find("keys.a.b.gfx942.verified_on: 'llvm23' but the file is labelled llvm22 (mislabelled)"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"arch_absent\"", "\"maybe\"")).find("unknown status 'maybe'"), std::string::npos);
  EXPECT_NE(error_of(with("\"gfx942\": {\"status\"", "\"gfx950\": {\"status\"")).find("arch not in toolchain.arches"),
            std::string::npos);
  EXPECT_NE(error_of(with("[\"gfx90a\", \"gfx942\"]", "[\"gfx90a\", \"gfx942\", \"gfx950\"]"))
                .find("lacks cells for some of toolchain.arches"),
            std::string::npos);
}

TEST(Rocke, TheLlvmMajorOfACompilersVersionString) {
  EXPECT_EQ(clang_major("AMD clang version 22.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-7.2.4)"), 22);
  EXPECT_EQ(clang_major("Debian LLVM version 22.1.8; Optimized build (22.1.8, 1:22.1.8-1~deb12u1)"), 22);
  EXPECT_EQ(clang_major("Ubuntu clang version 19.1.1 (1ubuntu1)"), 19);
  EXPECT_EQ(clang_major("a compiler of our own"), std::nullopt);
  EXPECT_EQ(clang_major("clang version x"), std::nullopt);
}

TEST(Rocke, ExportThenImportRoundTrips) {
  Column c;
  c.provenance.flavor = "llvm22";
  c.provenance.llvm_version = "22.1.8";
  c.provenance.identity = "Test LLVM version 22.1.8";
  c.provenance.targets = {"gfx90a", "gfx942"};
  c.cells = {cell(Status::kOk), cell(Status::kArchAbsent, "LLVM ERROR: Cannot select")};
  c.cells[1].target = "gfx942";
  c.cells[0].posed = CallPosing{{1}, std::nullopt, std::nullopt};  // lowered with the sweep's 1
  c.sort();
  c.recount();
  std::string text = render_rocke(c);
  RockeColumn back = parse_rocke(text, "exported.json");
  ASSERT_EQ(back.cells.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.cells[i].status, c.cells[i].status);
    EXPECT_EQ(back.cells[i].evidence, c.cells[i].evidence);
    auto imm = [](const Cell& x) { return x.posed ? x.posed->alike_immediate() : std::nullopt; };
    EXPECT_EQ(imm(back.cells[i]), imm(c.cells[i]));
    EXPECT_EQ(back.cells[i].intrinsic, c.cells[i].intrinsic);
  }
}

}  // namespace
}  // namespace archdb
