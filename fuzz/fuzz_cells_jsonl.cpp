// fuzz/fuzz_cells_jsonl.cpp — libFuzzer harness for the reader of data/<flavor>/cells.jsonl: parse_column
// (db/column_files.h) with the input as cells.jsonl and a fixed valid column.json (the seed
// fuzz/corpus/column_json/valid-llvm22-excerpt.json, embedded at build time, whose counts agree with the seed
// fuzz/corpus/cells_jsonl/valid-llvm22-excerpt.jsonl, so a valid input reaches the end of the parse).
// Expected for bad input: archdb::Error (one line naming file and line). A finding: any other exception, a
// crash, an ASan report, a hang (libFuzzer's -timeout) or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "db/column_files.h"
#include "embedded_column_json.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string column_json(reinterpret_cast<const char*>(kEmbeddedColumnJson), sizeof kEmbeddedColumnJson);
  const std::string cells_jsonl(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_column(column_json, cells_jsonl, "data/llvm22");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
