// fuzz/fuzz_manifest.cpp — libFuzzer harness for the reader of kernel manifests (`archdb check --manifest
// FILE`, the build gate, the bundled kernels/manifests/*.json): parse_manifest (checker/manifest.h).
// Seeds: some of the bundled manifests.
// Expected for bad input: archdb::Error (one line naming the file and the field). A finding: any other
// exception (a stray nlohmann::json::type_error among them), a crash, an ASan report, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checker/manifest.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_manifest(text, "kernels/manifests/fuzz.json");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  return 0;
}
