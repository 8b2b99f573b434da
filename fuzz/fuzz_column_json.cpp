// fuzz/fuzz_column_json.cpp — libFuzzer harness for the reader of data/<flavor>/column.json: parse_column
// (db/column_files.h) with the input as column.json and a fixed small valid cells.jsonl (the seed
// fuzz/corpus/cells_jsonl/valid-llvm22-excerpt.jsonl, embedded at build time, whose counts agree with the seed
// fuzz/corpus/column_json/valid-llvm22-excerpt.json, so a valid input reaches the end of the parse).
// Expected for bad input: archdb::Error (one line naming the file and the field). A finding: any other
// exception (a stray nlohmann::json::type_error among them), a crash, an ASan report, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "db/column_files.h"
#include "embedded_cells_jsonl.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string cells_jsonl(reinterpret_cast<const char*>(kEmbeddedCellsJsonl), sizeof kEmbeddedCellsJsonl);
  const std::string column_json(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_column(column_json, cells_jsonl, "data/llvm22");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
