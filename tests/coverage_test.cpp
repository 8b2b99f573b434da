// tests/coverage_test.cpp — the coverage gate: one test per committed column of this checkout (every
// measured column must be complete on every host; only a descriptor is a skip), and the gate's rules on
// made-up columns.
#include <gtest/gtest.h>

#include "db/column_files.h"
#include "db/coverage.h"
#include "llvm/toolchain.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;

class CoverageGate : public ::testing::TestWithParam<std::string> {};

TEST_P(CoverageGate, EveryCatalogKeyOnEveryWiredTarget) {
  fs::path root = test::source_dir();
  Catalog catalog = load_catalog((root / "schema/catalog.txt").string());
  TargetList targets = load_targets((root / "schema/targets.txt").string());
  for (const auto& cov : check_coverage(catalog, targets, root / "data", linked_toolchain().flavor())) {
    if (cov.flavor != GetParam()) continue;
    if (cov.result == FlavorCoverage::Result::kSkip) GTEST_SKIP() << cov.summary();
    EXPECT_EQ(cov.result, FlavorCoverage::Result::kPass) << cov.summary();
    return;
  }
  FAIL() << "no coverage verdict for " << GetParam();
}

std::vector<std::string> committed_flavors() {
  auto flavors = list_column_dirs(test::source_dir() / "data");
  // The column of the toolchain this build links must be committed; its absence is a failure too.
  std::string mine = linked_toolchain().flavor();
  if (std::find(flavors.begin(), flavors.end(), mine) == flavors.end()) flavors.push_back(mine);
  return flavors;
}

INSTANTIATE_TEST_SUITE_P(Committed, CoverageGate, ::testing::ValuesIn(committed_flavors()),
                         [](const auto& info) { return info.param; });

Column column_of(const std::string& flavor, const std::vector<std::string>& keys) {
  Column c;
  c.provenance.flavor = flavor;
  c.provenance.targets = {"gfx90a", "gfx942"};
  for (const auto& k : keys)
    for (const auto& t : c.provenance.targets)
      c.cells.push_back({k, t, Status::kNameAbsent, "llvm." + k, "not an intrinsic", {}, std::nullopt, "", ""});
  c.sort();
  c.recount();
  return c;
}

TEST(CoverageRules, EveryMeasuredColumnMustBeCompleteWhateverLlvmThisHostHas) {
  test::TempDir dir;
  Catalog catalog = parse_catalog("a.one llvm.a\nb.two llvm.b\n", "cat.txt");
  TargetList targets = parse_targets("gfx90a\ngfx942\n", "t.txt");
  write_column_dir(dir / "data", column_of("llvm22", {"a.one"}));
  write_column_dir(dir / "data", column_of("llvm5", {"a.one"}));  // no host has LLVM 5
  write_column_dir(dir / "data", column_of("llvm6", {"a.one", "b.two", "c.three"}));
  write_column_dir(dir / "data", column_of("llvm7", {"a.one", "b.two"}));
  auto report = check_coverage(catalog, targets, dir / "data", "llvm22");
  ASSERT_EQ(report.size(), 4u);
  for (const auto& cov : report) {
    if (cov.flavor == "llvm22" || cov.flavor == "llvm5") {
      EXPECT_EQ(cov.result, FlavorCoverage::Result::kFail) << cov.summary();
      EXPECT_EQ(cov.missing_keys, std::vector<std::string>{"b.two"});
      EXPECT_EQ(cov.fill_command(), "tools/regen-columns --only b.two " + cov.flavor);
      EXPECT_NE(cov.summary().find("fill it with: tools/regen-columns --only b.two " + cov.flavor), std::string::npos)
          << cov.summary();
    }
    if (cov.flavor == "llvm6") {
      EXPECT_EQ(cov.result, FlavorCoverage::Result::kFail) << "a key outside the catalog fails";
      EXPECT_EQ(cov.unknown_keys, std::vector<std::string>{"c.three"});
      EXPECT_EQ(cov.fill_command(), "tools/regen-columns llvm6") << "a whole regeneration drops it";
    }
    if (cov.flavor == "llvm7") {
      EXPECT_EQ(cov.result, FlavorCoverage::Result::kPass) << cov.summary();
      EXPECT_EQ(cov.fill_command(), "");
    }
  }
}

TEST(CoverageRules, AKeyPartlyThereOrAMissingTargetFails) {
  test::TempDir dir;
  Catalog catalog = parse_catalog("a.one llvm.a\n", "cat.txt");
  TargetList targets = parse_targets("gfx90a\ngfx942\ngfx950\n", "t.txt");
  Column partly = column_of("llvm5", {"a.one"});  // covers gfx90a and gfx942 only
  partly.cells.pop_back();
  partly.recount();
  write_column_dir(dir / "data", partly);
  write_column_dir(dir / "data", column_of("llvm22", {"a.one"}));
  for (const auto& cov : check_coverage(catalog, targets, dir / "data", "llvm22")) {
    EXPECT_EQ(cov.result, FlavorCoverage::Result::kFail) << cov.summary();
    EXPECT_EQ(cov.missing_targets, std::vector<std::string>{"gfx950"});
    EXPECT_EQ(cov.fill_command(), "tools/regen-columns " + cov.flavor);
    if (cov.flavor == "llvm5") {
      EXPECT_EQ(cov.missing_cells.size(), 2u) << "one on the missing target, one on a covered one: " << cov.summary();
    }
  }
}

TEST(CoverageRules, ADescriptorIsAOneLineSkipCountingTheKeysNeverAPass) {
  test::TempDir dir;
  Catalog catalog = parse_catalog("a.one llvm.a\nb.two llvm.b\n", "cat.txt");
  TargetList targets = parse_targets("gfx90a\n", "t.txt");
  Column descriptor;
  descriptor.provenance.flavor = "llvm5";
  descriptor.provenance.measured = false;
  descriptor.provenance.stands_for = "a vendor's LLVM 5";
  descriptor.provenance.how_to_measure = {"measure it there"};
  descriptor.provenance.targets = {"gfx90a"};
  write_column_dir(dir / "data", descriptor);
  write_column_dir(dir / "data", column_of("llvm22", {"a.one", "b.two"}));
  int seen = 0;
  for (const auto& cov : check_coverage(catalog, targets, dir / "data", "llvm22")) {
    if (cov.flavor != "llvm5") continue;
    ++seen;
    EXPECT_EQ(cov.result, FlavorCoverage::Result::kSkip);
    EXPECT_TRUE(cov.descriptor);
    std::string line = cov.summary();
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_NE(line.find("2 catalog keys"), std::string::npos) << line;
    EXPECT_EQ(line.find("a.one"), std::string::npos) << "the count, not the list: " << line;
    EXPECT_NE(line.find("a vendor's LLVM 5"), std::string::npos) << line;
  }
  EXPECT_EQ(seen, 1);
}

TEST(CoverageRules, MissingHostColumnAndCorruptColumnsFail) {
  test::TempDir dir;
  Catalog catalog = parse_catalog("a.one llvm.a\n", "cat.txt");
  TargetList targets = parse_targets("gfx90a\ngfx942\n", "t.txt");
  write_column_dir(dir / "data", column_of("llvm5", {"a.one"}));
  test::write(dir / "data/llvm5/cells.jsonl", "garbage\n");
  auto report = check_coverage(catalog, targets, dir / "data", "llvm22");
  ASSERT_EQ(report.size(), 2u);
  for (const auto& cov : report) EXPECT_EQ(cov.result, FlavorCoverage::Result::kFail) << cov.summary();
}

}  // namespace
}  // namespace archdb
