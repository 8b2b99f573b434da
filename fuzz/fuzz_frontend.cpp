// fuzz/fuzz_frontend.cpp — libFuzzer harness for the reader of data/<flavor>/frontend.txt: parse_frontend
// (db/frontend.h). Seeds: an excerpt of data/llvm22/frontend.txt whose header counts agree with its rows.
// Expected for bad input: archdb::Error (one line naming file and line). A finding: any other exception, a
// crash, an ASan report, a hang (libFuzzer's -timeout) or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "db/frontend.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_frontend(text, "data/llvm22/frontend.txt");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
