// tests/kernels_cli_test.cpp — `archdb wgrad` end to end: a problem checked on the CPU (exit 0), a wrong data
// path caught (exit 1), invalid problems refused with one line before any work (exit 2), the variant list.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;
using test::run_archdb;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(KernelsCli, WgradChecksTheEmulationAgainstTheReference) {
  auto r = run_archdb({"wgrad", "--kind", "depthwise", "--dtype", "bf16", "--n", "2", "--c", "20", "--h", "13", "--w",
                       "17", "--filter", "7", "--stride", "2", "--pad", "3", "--target-blocks", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("variant wgrad_dw_mfma_bf16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch wgrad_dw_t2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch wgrad_reduce_z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max abs error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tolerance"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "  pass\n"), 1u) << r.out;
}

TEST(KernelsCli, EveryVariantOfAKindAndDtype) {
  auto r = run_archdb({"wgrad", "--kind", "grouped", "--dtype", "f16", "--cpg", "8", "--c", "16", "--filter", "5",
                       "--pad", "2", "--variant", "all"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* v : {"wgrad_grouped_mfma_f16", "wgrad_grouped_mfma_tr16_f16", "wgrad_grouped_portable_f16"})
    EXPECT_NE(r.out.find(std::string("variant ") + v), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "  pass\n"), 3u) << r.out;
}

TEST(KernelsCli, AWrongDataPathFails) {
  auto r = run_archdb({"wgrad", "--variant", "wgrad_dw_mfma_tr16_f16", "--filter", "5", "--pad", "2", "--fault",
                       "tr16-no-transpose"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights outside their tolerance"), std::string::npos) << r.out;
}

TEST(KernelsCli, InvalidProblemsAreUsageErrorsOfOneLine) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--target-blocks", "0"}, "archdb: invalid wgrad problem: target_blocks must be >= 1 (got 0)\n"},
      {{"--target-blocks", "-1"}, "archdb: invalid wgrad problem: target_blocks must be >= 1 (got -1)\n"},
      {{"--target-blocks=-1", "--kind", "grouped"}, "archdb: invalid wgrad problem: target_blocks must be >= 1 (got -1)\n"},
      {{"--filter", "6"}, "archdb: invalid wgrad problem: filter must be odd, 3 to 11 (got 6)\n"},
      {{"--stride", "3"}, "archdb: invalid wgrad problem: stride must be 1 or 2 (got 3)\n"},
      {{"--pad", "3"}, "archdb: invalid wgrad problem: pad must be < filter 3 (got 3)\n"},
      {{"--kind", "grouped", "--cpg", "2"}, "archdb: invalid wgrad problem: cpg must be 4 or 8 for grouped (got 2)\n"},
      {{"--kind", "grouped", "--cpg", "8", "--c", "20"}, "archdb: invalid wgrad problem: c must be a multiple of cpg 8 (got 20)\n"},
      {{"--variant", "wgrad_grouped_mfma_f16"}, "archdb: variant wgrad_grouped_mfma_f16 serves grouped f16 problems, not depthwise f16\n"},
      // Beyond int64: named as out of range, never clamped to a number nobody typed.
      {{"--target-blocks", "99999999999999999999"},
       "archdb: invalid wgrad problem: target_blocks is out of range (got 99999999999999999999)\n"},
      {{"--target-blocks", "65536"}, "archdb: invalid wgrad problem: target_blocks must be <= 65535 (got 65536)\n"},
      {{"--c", "-99999999999999999999"}, "archdb: invalid wgrad problem: c is out of range (got -99999999999999999999)\n"},
      {{"--n", "2x"}, "archdb: invalid wgrad problem: n must be an integer (got '2x')\n"},
      // The data seed is 0 to 2^64-1: a negative one is refused, not wrapped around.
      {{"--seed", "-1"}, "archdb: --seed must be a non-negative integer, 0 to 18446744073709551615 (got '-1')\n"},
      {{"--seed", "18446744073709551616"},
       "archdb: --seed is out of range: 0 to 18446744073709551615 (got 18446744073709551616)\n"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {"wgrad"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_archdb(argv);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "") << "nothing runs for an invalid problem";
  }
}

TEST(KernelsCli, TheLargestSeedIsASeed) {
  auto r = run_archdb({"wgrad", "--seed", "18446744073709551615", "--c", "4", "--h", "5", "--w", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("data seed 18446744073709551615"), std::string::npos) << r.out;
}

TEST(KernelsCli, ListNamesEveryVariantWithItsKeys) {
  auto r = run_archdb({"wgrad", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\nwgrad_"), 12u) << r.out;
  EXPECT_EQ(count(r.out, "ds.read.tr16.b64"), 4u) << r.out;
  EXPECT_NE(r.out.find("mfma.f32.4x4x4bf16.1k,s.barrier,workgroup.x,workgroup.z,workitem.x"), std::string::npos);
}

TEST(KernelsCli, ListRefusesAManifestFolderThatDisagrees) {
  test::TempDir dir;
  fs::copy(test::source_dir() / "kernels" / "manifests", dir.path() / "m");
  fs::remove(dir.path() / "m" / "wgrad_dw_portable_f16.json");
  auto r = run_archdb({"wgrad", "--list", "--manifests", (dir.path() / "m").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no manifest for variant wgrad_dw_portable_f16"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace archdb
