// fuzz/fuzz_catalog.cpp — libFuzzer harness for the reader of schema/catalog.txt (or any --catalog FILE):
// parse_catalog (schema/catalog.h). Seeds: the committed catalog and a small one with a flavor override.
// Expected for bad input: archdb::Error (one line naming file, line and reason). A finding: any other
// exception, a crash, an ASan report, a hang (libFuzzer's -timeout) or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "schema/catalog.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_catalog(text, "schema/catalog.txt");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
