// tests/search_test.cpp — finding a name by any spelling (`archdb search`) and resolving it the same way in `query`
// and `history` (db/search.h), end to end on the committed data/ (the real columns, censuses and front ends).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include "db/search.h"
#include "db/store.h"
#include "schema/catalog.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// One database for the suite, read from the checkout's data/ by the first command.
class Search : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new test::TempDir(); }
  static void TearDownTestSuite() { delete dir_; }
  static test::RunResult archdb(std::vector<std::string> args) {
    std::vector<std::string> a = {"--db", (*dir_ / "db.sqlite").string()};
    a.insert(a.end(), args.begin(), args.end());
    return test::run_archdb(a);
  }
  static json hits(const std::string& text) {
    auto r = archdb({"search", text, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["hits"];
  }
  static test::TempDir* dir_;
};
test::TempDir* Search::dir_ = nullptr;

TEST(SearchNames, EverySpellingOfANameNormalizesAlike) {
  for (const char* s : {"__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "llvm.amdgcn.mfma.f32.4x4x4bf16.1k",
                        "amdgcn.mfma.f32.4x4x4bf16.1k", "MFMA_F32_4x4x4BF16_1K", " mfma.f32.4x4x4bf16.1k "})
    EXPECT_EQ(normalize_name(s), "mfma.f32.4x4x4bf16.1k") << s;
  EXPECT_EQ(normalize_name("llvm.fmuladd.v2f16"), "fmuladd.v2f16");
  EXPECT_EQ(normalize_name("v_dot4_i32_iu8"), "v.dot4.i32.iu8");
}

TEST_F(Search, AHipBuiltinFindsItsKeyIntrinsicAndInstructionKeyFirst) {
  json h = hits("__builtin_amdgcn_mfma_f32_4x4x4bf16_1k");
  ASSERT_GE(h.size(), 3u) << h.dump();
  EXPECT_EQ(h[0]["kind"], "key");
  EXPECT_EQ(h[0]["name"], "mfma.f32.4x4x4bf16.1k");
  EXPECT_EQ(h[0]["match"], "exact");
  EXPECT_EQ(h[0]["command"], "archdb query mfma.f32.4x4x4bf16.1k");
  bool builtin = false, mnemonic = false;
  for (const auto& x : h) {
    builtin |= x["kind"] == "builtin" && x["name"] == "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k";
    mnemonic |= x["kind"] == "mnemonic" && x["name"] == "v_mfma_f32_4x4x4bf16_1k";
  }
  EXPECT_TRUE(builtin) << h.dump();
  EXPECT_TRUE(mnemonic) << h.dump();
  // Part of a name, in HIP's spelling, finds the same names by prefix.
  json part = hits("mfma_f32_4x4x4bf16");
  ASSERT_FALSE(part.empty());
  EXPECT_EQ(part[0]["name"], "mfma.f32.4x4x4bf16.1k");
  EXPECT_EQ(part[0]["match"], "prefix");
}

TEST_F(Search, AnInstructionLeadsToTheIntrinsicsThatLowerToItAndAWordIsNoInstantiation) {
  json h = hits("s_sleep_var");
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h[0]["kind"], "intrinsic");
  EXPECT_EQ(h[0]["name"], "llvm.amdgcn.s.sleep.var");
  bool mnemonic = false;
  for (const auto& x : h) {
    if (x["kind"] == "mnemonic" && x["name"] == "s_sleep_var") {
      mnemonic = true;
      EXPECT_NE(std::find(x["means"].begin(), x["means"].end(), "llvm.amdgcn.s.sleep.var"), x["means"].end()) << x.dump();
    }
    EXPECT_NE(x["name"], "s.sleep") << "s_sleep_var is no instantiation of s.sleep: 'var' is not a type";
  }
  EXPECT_TRUE(mnemonic) << h.dump();
  auto none = archdb({"search", "zz_no_such_name"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("nothing matches 'zz_no_such_name'"), std::string::npos) << none.out;
  auto empty = archdb({"search", "__builtin_amdgcn_"});
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
}

TEST_F(Search, QueryAndHistoryResolveAnySpellingToTheKeyThatPosesIt) {
  for (const std::string asked : {"llvm.amdgcn.mfma.f32.4x4x4bf16.1k", "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k"}) {
    auto q = archdb({"query", asked, "--json", "--target", "gfx90a"});
    ASSERT_EQ(q.exit_code, 0) << asked << ": " << q.err;
    json j = json::parse(q.out);
    EXPECT_EQ(j["key"], "mfma.f32.4x4x4bf16.1k") << asked;
    EXPECT_EQ(j["resolved"]["asked"], asked);
  }
  auto permlane = archdb({"query", "permlane64", "--target", "gfx90a"});
  ASSERT_EQ(permlane.exit_code, 0) << permlane.err;
  EXPECT_EQ(permlane.out.rfind("permlane64: catalog key amdgcn.permlane64\n", 0), 0u) << permlane.out;
  auto history = archdb({"history", "__builtin_amdgcn_permlane64", "--json", "--target", "gfx90a"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(json::parse(history.out)["key"], "amdgcn.permlane64");
  // A key whose targets pose different instantiations (wave32 and wave64 WMMA) answers neither alone.
  auto wave64 = archdb({"query", "llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16", "--json"});
  if (wave64.exit_code == 0) {
    EXPECT_NE(json::parse(wave64.out)["key"], "wmma.f32.16x16x16.f16") << wave64.out;
  }
  // An instruction is not a call: the error names what lowers to it.
  auto inst = archdb({"query", "s_sleep_var_nope"});
  EXPECT_EQ(inst.exit_code, 2);
  EXPECT_NE(inst.err.find("unknown name 's_sleep_var_nope'"), std::string::npos) << inst.err;
  auto mnemonic = archdb({"query", "v_mfma_f32_4x4x4bf16_1k"});
  EXPECT_EQ(mnemonic.exit_code, 2);
  EXPECT_NE(mnemonic.err.find("is an instruction, not a call: "), std::string::npos) << mnemonic.err;
  EXPECT_NE(mnemonic.err.find("mfma.f32.4x4x4bf16.1k"), std::string::npos) << mnemonic.err;
  EXPECT_EQ(std::count(mnemonic.err.begin(), mnemonic.err.end(), '\n'), 1) << mnemonic.err;
}

// A command reads the index the database keeps while what it was built from is unchanged, and builds it again
// when the catalog or a column changes (or the kept row is not as archdb writes it).
TEST_F(Search, TheIndexKeptInTheDatabaseIsTheIndexBuiltAndFollowsItsInputs) {
  ASSERT_EQ(archdb({"runs", "--limit", "1"}).exit_code, 0);  // the database, made from data/
  auto store = Store::open(*dir_ / "db.sqlite");
  Catalog catalog = load_catalog(test::source_dir() / "schema" / "catalog.txt");
  auto same = [](const NameIndex& a, const NameIndex& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      const NameEntry &x = a.entries()[i], &y = b.entries()[i];
      if (x.kind != y.kind || x.name != y.name || x.flavors != y.flavors || x.means != y.means ||
          x.instantiations != y.instantiations)
        return false;
    }
    return true;
  };
  const NameIndex built = NameIndex::build(catalog, *store);
  EXPECT_TRUE(same(NameIndex::load_or_build(catalog, *store), built));  // built and kept
  sqlite3_exec(store->handle(), "UPDATE name_index SET entries = replace(entries, 'permlane64', 'kept')", nullptr, nullptr, nullptr);
  const NameIndex kept = NameIndex::load_or_build(catalog, *store);
  EXPECT_FALSE(same(kept, built)) << "the kept row is what a command reads";
  EXPECT_FALSE(kept.search("kept", 5).empty());
  // Another catalog: built again.
  Catalog more = catalog;
  more.entries.push_back(catalog.entries.front());
  more.entries.back().key = "zz.extra.key";
  const NameIndex rebuilt = NameIndex::load_or_build(more, *store);
  ASSERT_FALSE(rebuilt.search("zz.extra.key", 1).empty());
  EXPECT_EQ(rebuilt.search("zz.extra.key", 1)[0].match, NameMatch::kExact);
  EXPECT_TRUE(rebuilt.search("kept", 5).empty());
  // A column's cells changed in the database: built again.
  EXPECT_TRUE(same(NameIndex::load_or_build(catalog, *store), built));
  sqlite3_exec(store->handle(), "UPDATE name_index SET entries = replace(entries, 'permlane64', 'kept')", nullptr, nullptr, nullptr);
  sqlite3_exec(store->handle(), "DELETE FROM cell WHERE flavor = 'llvm19' AND decl_key = 'amdgcn.permlane64'", nullptr, nullptr, nullptr);
  EXPECT_TRUE(NameIndex::load_or_build(catalog, *store).search("kept", 5).empty());
  // A row that is not as archdb writes it, wholly or from a line on, is built again.
  sqlite3_exec(store->handle(), "UPDATE name_index SET entries = 'garbage'", nullptr, nullptr, nullptr);
  EXPECT_FALSE(NameIndex::load_or_build(catalog, *store).search("permlane64", 5).empty());
  sqlite3_exec(store->handle(), "UPDATE name_index SET entries = substr(entries, 1, 200) || 'x\ty\t\t\t\n'",
               nullptr, nullptr, nullptr);
  EXPECT_TRUE(same(NameIndex::load_or_build(catalog, *store), NameIndex::build(catalog, *store)))
      << "a kept row garbled part-way is not half read";
}

}  // namespace
}  // namespace archdb
