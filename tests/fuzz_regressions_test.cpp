// tests/fuzz_regressions_test.cpp — inputs the libFuzzer harnesses (fuzz/) found crashing a reader, kept as
// GoogleTest cases so that the ordinary test run holds the fix: each is now refused with an input_error (exit 3)
// naming the file, never another exception. The crashing inputs themselves are committed seeds,
// fuzz/corpus/<harness>/regression-*; every one of them is read here by the harness's reader, alongside small
// inline cases of the same defects.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checker/manifest.h"
#include "db/column_files.h"
#include "db/rocke.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {

namespace fs = std::filesystem;

// The error `read` throws: it must be an archdb::Error; anything else escapes and fails the test.
Error refusal(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the input was accepted";
  return internal_error("accepted");
}

void expect_input_error_naming(const std::function<void()>& read, const std::string& name) {
  Error e = refusal(read);
  EXPECT_EQ(e.code(), kExitBadInput) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind(name, 0), 0u) << e.what();
}

std::string corpus_file(const std::string& harness, const std::string& file) {
  return test::read(test::source_dir() / "fuzz" / "corpus" / harness / file);
}

// How each harness with regression seeds reads its input (as in fuzz/fuzz_<harness>.cpp) and the name its
// errors start with.
struct Reader {
  std::function<void(const std::string&)> read;
  std::string name;
};
std::map<std::string, Reader> readers() {
  return {
      {"manifest", {[](const std::string& t) { parse_manifest(t, "m.json"); }, "m.json"}},
      {"rocke", {[](const std::string& t) { parse_rocke(t, "r.json"); }, "r.json"}},
      {"column_json",
       {[](const std::string& t) {
          parse_column(t, corpus_file("cells_jsonl", "valid-llvm22-excerpt.jsonl"), "data/llvm22");
        },
        "data/llvm22/"}},
      {"cells_jsonl",
       {[](const std::string& t) {
          parse_column(corpus_file("column_json", "valid-llvm22-excerpt.json"), t, "data/llvm22");
        },
        "data/llvm22/"}},
  };
}

TEST(FuzzRegressions, EveryCommittedCrasherIsRefusedWithAnInputError) {
  size_t read = 0;
  for (const auto& entry : readers()) {
    const Reader& reader = entry.second;
    fs::path dir = test::source_dir() / "fuzz" / "corpus" / entry.first;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> crashers;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("regression-", 0) == 0) crashers.push_back(e.path());
    std::sort(crashers.begin(), crashers.end());
    for (const auto& path : crashers) {
      SCOPED_TRACE(path.string());
      std::string text = test::read(path);
      expect_input_error_naming([&] { reader.read(text); }, reader.name);
      ++read;
    }
  }
  EXPECT_GE(read, 3u);  // at least the three found first: manifest (2) and rocke (1)
}

// nlohmann::json throws out_of_range, not parse_error, for a number past double's range: each reader that
// parsed with exceptions let it escape (fuzz_manifest, fuzz_rocke).
TEST(FuzzRegressions, ANumberPastDoublesRangeIsAnInputError) {
  const std::string huge = "1e400";
  expect_input_error_naming(
      [&] { parse_manifest(R"({"schema":"archdb.kernel-manifest/v1","kernel":)" + huge + "}", "m.json"); },
      "m.json: not JSON");
  expect_input_error_naming([&] { parse_rocke(R"({"schema":)" + huge + "}", "r.json"); }, "r.json: invalid JSON");
  const std::string column_json = corpus_file("column_json", "valid-llvm22-excerpt.json");
  const std::string cells = corpus_file("cells_jsonl", "valid-llvm22-excerpt.jsonl");
  expect_input_error_naming([&] { parse_column(R"({"schema":)" + huge + "}", cells, "data/llvm22"); },
                            "data/llvm22/column.json: invalid JSON");
  expect_input_error_naming([&] { parse_column(column_json, R"({"imm":)" + huge + "}\n", "data/llvm22"); },
                            "data/llvm22/cells.jsonl:1: invalid JSON");
}

// json::value("schema", "") throws type_error when the field is there but not a string (fuzz_manifest).
TEST(FuzzRegressions, AManifestSchemaThatIsNotAStringIsAnInputError) {
  for (const std::string schema : {"1", "null", "[]", "{}", "true"})
    expect_input_error_naming([&] { parse_manifest(R"({"schema":)" + schema + R"(,"kernel":"k"})", "m.json"); },
                              "m.json: manifest 'schema' must be");
}

}  // namespace
}  // namespace archdb
