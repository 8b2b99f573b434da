// db/coverage.h — the coverage gate: every catalog key on every wired target in every committed column.
// It judges the committed data, never the host: a measured column that lacks a key, a cell or a wired target
// fails wherever it is checked, whether or not this host has that column's LLVM, and says the one command
// that fills it. Only a descriptor (a column with no cells, standing for a toolchain measured elsewhere) is a
// skip, and a skip is never a pass.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb {

struct FlavorCoverage {
  enum class Result { kPass, kFail, kSkip };
  std::string flavor;
  Result result = Result::kPass;
  int cells = 0;
  int catalog_keys = 0;                      // what a descriptor's skip counts
  bool descriptor = false;                   // no cells: it stands for a toolchain measured elsewhere
  std::string stands_for;                    // a descriptor's toolchain
  std::vector<std::string> how_to_measure;   // a descriptor's steps, where that toolchain is
  std::vector<std::string> problems;         // the column does not read (corrupt, mislabelled, ...)
  std::vector<std::string> unknown_keys;     // in the column, not in the catalog
  std::vector<std::string> missing_keys;     // catalog keys with no cell at all
  std::vector<std::string> missing_cells;    // key/target for keys that are partly there
  std::vector<std::string> missing_targets;  // wired targets the column does not cover

  std::string summary() const;       // one line
  std::string fill_command() const;  // the command that completes the column ("" when nothing is missing)
};

// `linked_flavor`: the flavor of the LLVM this build links; its column must be committed.
std::vector<FlavorCoverage> check_coverage(const Catalog& catalog, const TargetList& targets,
                                           const std::filesystem::path& data_root, const std::string& linked_flavor);

}  // namespace archdb
