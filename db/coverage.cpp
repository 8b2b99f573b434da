// db/coverage.cpp — the coverage gate (see coverage.h).
#include "db/coverage.h"

#include <map>
#include <set>

#include "db/column_files.h"
#include "support/error.h"

namespace archdb {
namespace fs = std::filesystem;

namespace {
std::string list(const std::vector<std::string>& v, size_t max = 12) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}
}  // namespace

std::string FlavorCoverage::fill_command() const {
  if (descriptor || (missing_keys.empty() && missing_cells.empty() && missing_targets.empty() && unknown_keys.empty()))
    return "";
  // A few keys are re-measured alone; keys outside the catalog or a missing target need the whole column.
  std::set<std::string> keys(missing_keys.begin(), missing_keys.end());
  for (const auto& kt : missing_cells) keys.insert(kt.substr(0, kt.find('/')));
  if (!unknown_keys.empty() || !missing_targets.empty() || keys.size() > 8) return "tools/regen-columns " + flavor;
  std::string only;
  for (const auto& k : keys) only += (only.empty() ? "" : ",") + k;
  return "tools/regen-columns --only " + only + " " + flavor;
}

std::string FlavorCoverage::summary() const {
  std::string s = flavor + ": ";
  switch (result) {
    case Result::kPass: return s + "complete, " + std::to_string(cells) + " cells";
    case Result::kSkip:
      return s + "SKIP, a descriptor with no cells (" + stands_for + "): " + std::to_string(catalog_keys) +
             " catalog keys to measure where that toolchain is (`archdb coverage --flavor " + flavor + "` says how)";
    case Result::kFail: s += "FAIL"; break;
  }
  if (!problems.empty()) s += "; " + list(problems);
  if (!unknown_keys.empty()) s += "; keys not in the catalog: " + list(unknown_keys);
  if (!missing_targets.empty()) s += "; targets not covered: " + list(missing_targets);
  if (!missing_keys.empty()) s += "; keys not measured: " + list(missing_keys);
  if (!missing_cells.empty()) s += "; cells missing: " + list(missing_cells);
  if (std::string fill = fill_command(); !fill.empty()) s += "; fill it with: " + fill;
  return s;
}

std::vector<FlavorCoverage> check_coverage(const Catalog& catalog, const TargetList& targets,
                                           const fs::path& data_root, const std::string& linked_flavor) {
  std::vector<FlavorCoverage> out;
  std::vector<std::string> keys = catalog.keys();
  for (const auto& flavor : list_column_dirs(data_root)) {
    FlavorCoverage cov;
    cov.flavor = flavor;
    cov.catalog_keys = static_cast<int>(keys.size());
    Column column;
    try {
      column = read_column_dir(data_root / flavor);
    } catch (const Error& e) {
      cov.problems.push_back(e.what());
      cov.result = FlavorCoverage::Result::kFail;
      out.push_back(cov);
      continue;
    }
    cov.cells = static_cast<int>(column.cells.size());
    cov.descriptor = !column.provenance.measured;
    if (cov.descriptor) {
      // It has nothing to check but that it reads; its cells come from wherever its toolchain is.
      cov.stands_for = column.provenance.stands_for;
      cov.how_to_measure = column.provenance.how_to_measure;
      cov.result = FlavorCoverage::Result::kSkip;
      out.push_back(cov);
      continue;
    }
    for (const auto& t : targets.names)
      if (std::find(column.provenance.targets.begin(), column.provenance.targets.end(), t) ==
          column.provenance.targets.end())
        cov.missing_targets.push_back(t);
    std::map<std::string, std::set<std::string>> present;
    for (const auto& c : column.cells) present[c.key].insert(c.target);
    for (const auto& [key, ts] : present)
      if (!catalog.find(key)) cov.unknown_keys.push_back(key);
    for (const auto& key : keys) {
      auto it = present.find(key);
      if (it == present.end()) {
        cov.missing_keys.push_back(key);
        continue;
      }
      for (const auto& t : targets.names)
        if (!it->second.count(t)) cov.missing_cells.push_back(key + "/" + t);
    }
    bool incomplete = !cov.missing_keys.empty() || !cov.missing_cells.empty() || !cov.missing_targets.empty();
    if (incomplete || !cov.problems.empty() || !cov.unknown_keys.empty()) cov.result = FlavorCoverage::Result::kFail;
    out.push_back(cov);
  }
  bool linked_present = false;
  for (const auto& cov : out) linked_present |= cov.flavor == linked_flavor;
  if (!linked_present) {
    FlavorCoverage cov;
    cov.flavor = linked_flavor;
    cov.result = FlavorCoverage::Result::kFail;
    cov.problems.push_back("no committed column " + (data_root / linked_flavor).string() +
                           " for the LLVM this archdb links; make it with tools/regen-columns " + linked_flavor);
    out.push_back(cov);
  }
  return out;
}

}  // namespace archdb
