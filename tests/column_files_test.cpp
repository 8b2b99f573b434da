// tests/column_files_test.cpp — data/<flavor>/: one canonical serialisation, round trips byte for byte,
// and every kind of corruption refused with file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "db/census.h"
#include "db/column_files.h"
#include "support/files.h"
#include "support/error.h"
#include "support/json_depth.h"
#include "test_support.h"

namespace archdb {
namespace {

Column sample() {
  Column c;
  c.provenance.flavor = "llvm22";
  c.provenance.llvm_version = "22.1.8";
  c.provenance.llvm_major = 22;
  c.provenance.identity = "Test LLVM version 22.1.8";
  c.provenance.immarg_sweep = {1, 2};
  c.provenance.targets = {"gfx90a", "gfx1201"};
  Cell ok{"mfma.x", "gfx90a", Status::kOk, "llvm.amdgcn.mfma.x", "", {"v_mfma_x"}, std::nullopt, "", ""};
  Cell no{"mfma.x", "gfx1201", Status::kArchAbsent, "llvm.amdgcn.mfma.x", "LLVM ERROR: Cannot select", {}, std::nullopt, "", ""};
  Cell swept{"a.lds", "gfx90a", Status::kOk, "llvm.amdgcn.global.load.lds", "", {"global_load_lds_ubyte"}, CallPosing{{1, 1}, false, std::nullopt}, "", ""};
  Cell absent{"a.lds", "gfx1201", Status::kNameAbsent, "llvm.amdgcn.global.load.lds", "not an intrinsic", {}, std::nullopt, "", ""};
  c.cells = {ok, no, swept, absent};
  c.sort();
  c.recount();
  return c;
}

std::string error_of(const std::string& column_json, const std::string& cells) {
  try {
    parse_column(column_json, cells, "data/llvm22");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(ColumnFiles, RoundTripIsByteIdentical) {
  Column c = sample();
  std::string cj = render_column_json(c), cl = render_cells_jsonl(c);
  Column back = parse_column(cj, cl, "data/llvm22");
  EXPECT_EQ(render_column_json(back), cj);
  EXPECT_EQ(render_cells_jsonl(back), cl);
  EXPECT_EQ(back.cells, c.cells);
  // Sorted by key, then target; one object a line; no timestamps anywhere.
  EXPECT_EQ(cl.substr(0, cl.find('\n')),
            R"({"key":"a.lds","target":"gfx1201","status":"name_absent","intrinsic":"llvm.amdgcn.global.load.lds","evidence":"not an intrinsic"})");
  EXPECT_EQ(cj.find("\"20"), std::string::npos) << "no dates";
  EXPECT_EQ(cj.find("_at\""), std::string::npos) << "no timestamps";
}

TEST(ColumnFiles, CorruptCellsAreRefusedWithFileAndLine) {
  Column c = sample();
  std::string cj = render_column_json(c), cl = render_cells_jsonl(c);
  size_t second = cl.find('\n') + 1;
  std::string line2 = cl.substr(second, cl.find('\n', second) - second);

  EXPECT_NE(error_of(cj, cl.substr(0, second) + "{not json\n" + cl.substr(cl.find('\n', second) + 1))
                .find("data/llvm22/cells.jsonl:2: invalid JSON"),
            std::string::npos);
  std::string swapped = line2 + "\n" + cl.substr(0, second) + cl.substr(cl.find('\n', second) + 1);
  EXPECT_NE(error_of(cj, swapped).find("cells.jsonl:2: cells are not sorted"), std::string::npos);
  EXPECT_NE(error_of(cj, cl.substr(0, second) + cl.substr(0, second) + cl.substr(second)).find("duplicate cell"),
            std::string::npos);
  std::string probe_error = cl;
  probe_error.replace(probe_error.find("name_absent"), 11, "probe_error");
  EXPECT_NE(error_of(cj, probe_error).find("cells.jsonl:1: probe_error is a defect of the probe"), std::string::npos);
  std::string no_evidence = cl;
  const std::string evidence_field = ",\"evidence\":\"not an intrinsic\"";
  no_evidence.replace(no_evidence.find(evidence_field), evidence_field.size(), "");
  EXPECT_NE(error_of(cj, no_evidence).find("cells.jsonl:1: status name_absent without evidence"), std::string::npos);
  std::string unknown_status = cl;
  unknown_status.replace(unknown_status.find("name_absent"), 11, "maybe");
  EXPECT_NE(error_of(cj, unknown_status).find("unknown status 'maybe'"), std::string::npos);
  std::string foreign_target = cl;
  foreign_target.replace(foreign_target.find("gfx1201"), 7, "gfx1100");
  EXPECT_NE(error_of(cj, foreign_target).find("target 'gfx1100' is not in column.json's target list"),
            std::string::npos);
  EXPECT_NE(error_of(cj, cl.substr(0, cl.size() - 1)).find("not terminated by a newline"), std::string::npos);
  EXPECT_NE(error_of(cj, cl.substr(0, second)).find("counts and keys disagree"), std::string::npos);
}

// A file or a line no archdb writes the like of is refused in one line, not read into memory: the committed data
// files (the census and front end too) and every file archdb reads.
TEST(ColumnFiles, FilesAndLinesPastTheirLimitsAreRefusedInOneLine) {
  Column c = sample();
  std::string cj = render_column_json(c), cl = render_cells_jsonl(c);
  std::string huge = "{\"key\":\"" + std::string(kMaxLineBytes, 'x') + "\"}\n";
  EXPECT_EQ(error_of(cj, cl + huge), "data/llvm22/cells.jsonl:5: " + line_too_long(huge.size() - 1));
  EXPECT_EQ(line_too_long(2000000), "a line of 2000000 bytes; archdb reads lines of at most 1 MiB");
  std::string census = test::read(test::source_dir() / "data" / "llvm22" / "census.txt");
  size_t third = census.find('\n', census.find('\n') + 1) + 1;
  try {
    parse_census(census.substr(0, third) + "# " + std::string(kMaxLineBytes, 'y') + "\n", "census.txt");
    ADD_FAILURE() << "an overlong census line was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "census.txt:3: " + line_too_long(kMaxLineBytes + 2));
  }
  test::TempDir dir;
  const auto big = dir / "big.txt";
  { std::ofstream touch(big); }
  std::filesystem::resize_file(big, kMaxFileBytes + 1);  // sparse: no disk spent
  try {
    read_file(big);
    ADD_FAILURE() << "a file past the limit was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    EXPECT_EQ(std::string(e.what()), big.string() + ": " + std::to_string(kMaxFileBytes + 1) +
                                         " bytes; archdb reads files of at most 512 MiB");
  }
}

TEST(ColumnFiles, ProvenanceMustMatchTheFolder) {
  Column c = sample();
  std::string cj = render_column_json(c);
  cj.replace(cj.find("\"flavor\": \"llvm22\""), 18, "\"flavor\": \"llvm23\"");
  EXPECT_NE(error_of(cj, render_cells_jsonl(c)).find("provenance names flavor 'llvm23' but the folder is 'llvm22'"),
            std::string::npos);
  EXPECT_NE(error_of("{]", render_cells_jsonl(c)).find("data/llvm22/column.json: invalid JSON"), std::string::npos);
}

TEST(ColumnFiles, WriteReplacesTheFolderWhole) {
  test::TempDir dir;
  Column c = sample();
  write_column_dir(dir.path(), c);
  EXPECT_EQ(test::read(dir / "llvm22/cells.jsonl"), render_cells_jsonl(c));
  c.cells.pop_back();
  c.recount();
  write_column_dir(dir.path(), c);
  EXPECT_EQ(read_column_dir(dir / "llvm22").cells.size(), 3u);
  EXPECT_EQ(column_dir_digest(dir / "llvm22"), column_digest(c));
  // Nothing left behind: no staging or backup folders.
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) entries += !e.path().empty();
  EXPECT_EQ(entries, 1);
}

TEST(ColumnFiles, CommittedColumnsAreInCanonicalForm) {
  // One serialisation only: every committed column re-renders to exactly its bytes.
  auto data = test::source_dir() / "data";
  auto flavors = list_column_dirs(data);
  ASSERT_FALSE(flavors.empty());
  for (const auto& flavor : flavors) {
    Column c = read_column_dir(data / flavor);
    EXPECT_EQ(render_column_json(c), test::read(data / flavor / "column.json")) << flavor;
    if (c.provenance.measured) {
      EXPECT_EQ(render_cells_jsonl(c), test::read(data / flavor / "cells.jsonl")) << flavor;
    }
  }
}

TEST(ColumnFiles, DescriptorHasNoCellsAndSaysHowToMeasure) {
  std::string descriptor = R"({"schema": "archdb.column/v1", "flavor": "llvm22", "measured": false,
    "stands_for": "a toolchain elsewhere", "how_to_measure": ["build there", "regen there"], "targets": ["gfx90a"]})";
  Column c = parse_column(descriptor, "", "data/llvm22");
  EXPECT_FALSE(c.provenance.measured);
  EXPECT_TRUE(c.cells.empty());
  EXPECT_NE(error_of(descriptor, "{}\n").find("a descriptor (column.json says measured: false) has no cells"),
            std::string::npos);
  std::string no_how = descriptor;
  const std::string how = "[\"build there\", \"regen there\"]";
  no_how.replace(no_how.find(how), how.size(), "[]");
  EXPECT_NE(error_of(no_how, "").find("must say how to measure it"), std::string::npos);
  test::TempDir dir;
  write_column_dir(dir.path(), c);
  EXPECT_FALSE(std::filesystem::exists(dir / "llvm22/cells.jsonl"));
  EXPECT_EQ(read_column_dir(dir / "llvm22").provenance.how_to_measure.size(), 2u);
  // A measured column without its cells is broken, not a descriptor.
  std::filesystem::remove(dir / "llvm22/column.json");
  Column measured = sample();
  write_column_dir(dir.path(), measured);
  std::filesystem::remove(dir / "llvm22/cells.jsonl");
  EXPECT_THROW(read_column_dir(dir / "llvm22"), Error);
}

// How deeply JSON nests, counted without recursion: brackets in strings (escaped quotes too) do not count.
TEST(JsonDepth, CountsNestingOutsideStrings) {
  EXPECT_EQ(json_depth("1"), 0u);
  EXPECT_EQ(json_depth(R"({"a":[1,{"b":[]}]})"), 4u);
  EXPECT_EQ(json_depth(R"({"a":"[[[{{\"[["})"), 1u);
  EXPECT_EQ(json_depth(std::string(100000, '[')), 100000u);  // unbalanced: what it opened
  EXPECT_NO_THROW(check_json_depth(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "x"));
  try {
    check_json_depth(std::string(kMaxJsonDepth + 1, '{'), "f.json:3");
    FAIL() << "65 levels read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "f.json:3: JSON nested 65 levels deep (at most 64 are read)");
    EXPECT_EQ(e.code(), kExitBadInput);
  }
}

}  // namespace
}  // namespace archdb
