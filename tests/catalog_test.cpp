// tests/catalog_test.cpp — the catalog and target list: the committed ones are what the issue asks for;
// malformed entries are refused with file, line and reason.
#include <gtest/gtest.h>

#include <algorithm>

#include "schema/catalog.h"
#include "schema/targets.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_catalog(text, "cat.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(Catalog, ParsesTheThreeFormsAndOverrides) {
  Catalog c = parse_catalog(
      "# comment\n"
      "a.b      llvm.amdgcn.mfma.f32.4x4x4bf16.1k\n"
      "c.d      llvm.fmuladd[<4 x float>]   # trailing comment\n"
      "    @llvm19 llvm.fmuladd[<4 x float>]\n"
      "e.f      llvm.amdgcn.wmma.f32.16x16x16.bf16[<8 x float>, <16 x i16>]\n"
      "g.h      declare <2 x half> @llvm.amdgcn.global.atomic.fadd.v2f16.p1.v2f16(ptr addrspace(1), <2 x half>)\n",
      "cat.txt");
  ASSERT_EQ(c.entries.size(), 4u);
  EXPECT_EQ(c.entries[0].spec.name, "llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
  EXPECT_FALSE(c.entries[0].spec.overloaded);
  EXPECT_EQ(c.entries[1].spec.overload_types, std::vector<std::string>{"<4 x float>"});
  EXPECT_EQ(c.entries[1].per_flavor.count("llvm19"), 1u);
  EXPECT_EQ(c.entries[2].spec.overload_types, (std::vector<std::string>{"<8 x float>", "<16 x i16>"}));
  EXPECT_EQ(c.entries[3].spec.kind, DeclSpec::Kind::kDeclare);
  EXPECT_EQ(c.entries[3].spec.name, "llvm.amdgcn.global.atomic.fadd.v2f16.p1.v2f16");
  EXPECT_EQ(c.entries[3].line, 6);
  EXPECT_EQ(&c.entries[1].spec_for("llvm19"), &c.entries[1].per_flavor.at("llvm19"));
  EXPECT_EQ(&c.entries[1].spec_for("llvm22"), &c.entries[1].spec);
}

TEST(Catalog, AWave64OverrideIsTheSpecOfWave64TargetsInEveryFlavor) {
  Catalog c = parse_catalog(
      "w.f16    llvm.amdgcn.wmma.f32.16x16x16.f16[<8 x float>, <16 x half>]\n"
      "    @llvm19 llvm.amdgcn.wmma.f32.16x16x16.f16[<8 x float>, <16 x half>]\n"
      "    @wave64 llvm.amdgcn.wmma.f32.16x16x16.f16[<4 x float>, <16 x half>]\n",
      "cat.txt");
  const CatalogEntry& e = c.entries.at(0);
  ASSERT_TRUE(e.wave64.has_value());
  EXPECT_EQ(e.wave64->overload_types, (std::vector<std::string>{"<4 x float>", "<16 x half>"}));
  EXPECT_EQ(&e.spec_for("llvm22", "gfx1100:+wavefrontsize64,-wavefrontsize32"), &*e.wave64);
  EXPECT_EQ(&e.spec_for("llvm19", "gfx1100:+wavefrontsize64"), &*e.wave64);
  EXPECT_EQ(&e.spec_for("llvm22", "gfx1100"), &e.spec);
  EXPECT_EQ(&e.spec_for("llvm19", "gfx1100:-wavefrontsize64"), &e.per_flavor.at("llvm19"));
  EXPECT_EQ(parse_error("a.b llvm.x\n    @wave64 llvm.y\n    @wave64 llvm.z\n"), "cat.txt:3: second wave64 override of key 'a.b'");
  EXPECT_EQ(parse_error("a.b llvm.x\n    @wave32 llvm.y\n"),
            "cat.txt:2: invalid override '@wave32' (expected a flavor, e.g. '@llvm19', or '@wave64')");
}

TEST(Catalog, MalformedEntriesNameFileLineAndReason) {
  EXPECT_EQ(parse_error("a.b llvm.x\na.b llvm.y\n"), "cat.txt:2: duplicate key 'a.b' (first at line 1)");
  EXPECT_NE(parse_error("A.B llvm.x\n").find("cat.txt:1: invalid key 'A.B'"), std::string::npos);
  EXPECT_NE(parse_error("a..b llvm.x\n").find("cat.txt:1: invalid key"), std::string::npos);
  EXPECT_NE(parse_error("a.b\n").find("cat.txt:1: entry 'a.b' has no spec"), std::string::npos);
  EXPECT_NE(parse_error("a.b llvm.fmuladd[<4 x float>\n").find("cat.txt:1:"), std::string::npos);
  EXPECT_NE(parse_error("a.b llvm.fmuladd[float,]\n").find("cat.txt:1: empty overload type"), std::string::npos);
  EXPECT_NE(parse_error("a.b amdgcn.nope\n").find("cat.txt:1: expected an intrinsic name"), std::string::npos);
  EXPECT_NE(parse_error("a.b declare i32 (i32)\n").find("cat.txt:1: declare without a function name"), std::string::npos);
  EXPECT_NE(parse_error("a.b llvm.x\n  @llvm llvm.y\n").find("cat.txt:2: invalid override '@llvm'"), std::string::npos);
  EXPECT_NE(parse_error("  @llvm19 llvm.y\n").find("cat.txt:1: override before any entry"),
            std::string::npos);
  EXPECT_NE(parse_error("a.b llvm.x\n  llvm.y\n").find("cat.txt:2: an indented line must be"), std::string::npos);
  EXPECT_NE(parse_error("# nothing\n").find("no entries"), std::string::npos);
}

TEST(Catalog, CommittedCatalogHasTheRequiredKeys) {
  Catalog c = load_catalog((test::source_dir() / "schema/catalog.txt").string());
  EXPECT_GE(c.entries.size(), 180u);
  for (const char* key : {"mfma.f32.4x4x4f16", "mfma.f32.4x4x4bf16.1k", "mfma.f32.4x4x1f32", "amdgcn.fdot2.f16",
                          "amdgcn.fdot2.bf16", "ds.read.tr16.b64", "s.barrier.signal", "global.load.lds"})
    EXPECT_NE(c.find(key), nullptr) << key;
  EXPECT_EQ(c.find("amdgcn.fdot2.f16")->spec.name, "llvm.amdgcn.fdot2.f16.f16");
  EXPECT_EQ(c.find("amdgcn.fdot2.bf16")->spec.name, "llvm.amdgcn.fdot2.bf16.bf16");
}

TEST(Targets, CommittedListHasTheRequiredTargets) {
  TargetList t = load_targets((test::source_dir() / "schema/targets.txt").string());
  for (const char* name : {"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1151", "gfx1201",
                           "gfx1250", "gfx11-generic", "gfx12-generic"})
    EXPECT_TRUE(t.contains(name)) << name;
}

TEST(Targets, BadNamesAndDuplicatesAreRefused) {
  EXPECT_THROW(parse_targets("gfx90a\nsm_90\n", "t.txt"), Error);
  try {
    parse_targets("gfx90a\ngfx90a\n", "t.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.txt:2: duplicate target 'gfx90a'");
  }
}

// A target may carry the features it is measured with, in LLVM's -mattr form (the checker's on-demand cells).
TEST(Targets, ANameMayCarryFeatures) {
  for (const char* good : {"gfx1100", "gfx11-generic", "gfx1100:+wavefrontsize64", "gfx1100:+wavefrontsize64,-wavefrontsize32",
                           "gfx90a:+xnack"})
    EXPECT_TRUE(is_valid_target_name(good)) << good;
  for (const char* bad : {"gfx1100:", "gfx1100:wavefrontsize64", "gfx1100:+", "gfx1100:+a,,+b", "gfx1100:+A", "sm_90:+x",
                          "gfx1100:+a b"})
    EXPECT_FALSE(is_valid_target_name(bad)) << bad;
  EXPECT_EQ(target_processor("gfx1100:+wavefrontsize64"), "gfx1100");
  EXPECT_EQ(target_features("gfx1100:+wavefrontsize64"), "+wavefrontsize64");
  EXPECT_EQ(target_processor("gfx942"), "gfx942");
  EXPECT_EQ(target_features("gfx942"), "");
}

}  // namespace
}  // namespace archdb
