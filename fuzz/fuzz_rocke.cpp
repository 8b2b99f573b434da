// fuzz/fuzz_rocke.cpp — libFuzzer harness for the reader of rocKE's rocke-v1 columns (`archdb import --format
// rocke-v1 FILE`, `archdb compare --with FILE`): parse_rocke (db/rocke.h), each input read twice, without a
// known-target check and with one (as the CLI passes: the wired targets and the processors LLVM knows; here a
// fixed list, so that both answers of the check are reached). Seeds: the tests' small column
// (tests/test_support.h, kSmallRockeColumn) and one shaped as `archdb export --format rocke-v1` writes it.
// Expected for bad input: archdb::Error (one line naming the file and the field). A finding: any other
// exception, a crash, an ASan report, a hang (libFuzzer's -timeout) or a leak.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "db/rocke.h"
#include "support/error.h"

namespace {

bool known_processor(const std::string& name) {
  static const std::set<std::string> kKnown = {"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100",
                                               "gfx1151", "gfx1201", "gfx1250", "gfx11-generic", "gfx12-generic"};
  return kKnown.count(name) > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    archdb::parse_rocke(text, "fuzz.rocke.json");
  } catch (const archdb::Error&) {
    // refused with a one-line error: the expected answer to bad input
  }
  try {
    archdb::parse_rocke(text, "fuzz.rocke.json", known_processor);
  } catch (const archdb::Error&) {
  }
  return 0;
}
