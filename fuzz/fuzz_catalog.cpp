// fuzz/fuzz_catalog.cpp — libFuzzer harness for the readers of catalogs: parse_catalog (schema/catalog.txt, or
// any --catalog FILE) and catalog_from_peer_decls (a peer's KEY<TAB>declare table, `archdb catalog import`),
// whose output must itself parse as a catalog. Seeds: the committed catalog, a small one with a flavor
// override, and a small declaration table.
// Expected for bad input: archdb::Error (one line naming file, line and reason). A finding: any other
// exception, a catalog made from a table that does not parse, a crash, an ASan report, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
  std::string made;
  try {
    made = archdb::catalog_from_peer_decls(text, "decls.tsv", "decls.tsv");
  } catch (const archdb::Error&) {
    return 0;
  }
  try {
    archdb::parse_catalog(made, "catalog.txt");
  } catch (const archdb::Error& e) {
    std::fprintf(stderr, "fuzz_catalog: a catalog made from a table does not parse: %s\n", e.what());
    std::abort();
  }
  return 0;
}
