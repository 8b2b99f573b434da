// fuzz/fuzz_targets.cpp — libFuzzer harness for the reader of schema/targets.txt (or any --targets-file FILE):
// parse_targets (schema/targets.h). Seeds: the committed target list and a short one.
// Expected for bad input: archdb::Error (one line naming file and line). A finding: any other exception, a
// crash, an ASan report, a hang (libFuzzer's -timeout) or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "schema/targets.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_targets(text, "schema/targets.txt");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
