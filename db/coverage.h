// db/coverage.h — the coverage gate: every catalog key on every wired target in every committed column.
// A column of a toolchain this host has must be complete; one whose toolchain this host lacks is a named
// skip that lists what is missing, never a pass.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb {

struct FlavorCoverage {
  enum class Verdict { kPass, kFail, kSkip };
  std::string flavor;
  Verdict verdict = Verdict::kPass;
  bool toolchain_here = false;
  std::string toolchain_note;                // why we think the host has it, or lacks it
  int cells = 0;
  bool descriptor = false;                   // no cells yet: it says how to measure the flavor elsewhere
  std::vector<std::string> problems;         // the column does not read (corrupt, mislabelled, ...)
  std::vector<std::string> unknown_keys;     // in the column, not in the catalog
  std::vector<std::string> missing_keys;     // catalog keys with no cell at all
  std::vector<std::string> missing_cells;    // key/target for keys that are partly there
  std::vector<std::string> missing_targets;  // wired targets the column does not cover

  std::string summary() const;  // one line
};

// Where provisioned toolchain roots live: $ARCHDB_CACHE or ~/.cache/archdb, then roots/sid-<flavor>.
std::filesystem::path provisioned_root(const std::string& flavor);
// Whether this host has the toolchain of `flavor`: it is the one this build links, a Debian llvm-N-dev is
// installed, or a provisioned root for it is whole. `note` says which, or that none is.
bool host_has_toolchain(const std::string& flavor, const std::string& linked_flavor, std::string& note);

std::vector<FlavorCoverage> check_coverage(const Catalog& catalog, const TargetList& targets,
                                           const std::filesystem::path& data_root, const std::string& linked_flavor);

}  // namespace archdb
