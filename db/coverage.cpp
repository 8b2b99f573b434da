// db/coverage.cpp — the coverage gate (see coverage.h).
#include "db/coverage.h"

#include <cstdlib>
#include <map>
#include <set>

#include "db/column_files.h"
#include "support/error.h"
#include "support/files.h"

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

std::string FlavorCoverage::summary() const {
  std::string s = flavor + ": ";
  switch (verdict) {
    case Verdict::kPass: return s + "complete, " + std::to_string(cells) + " cells";
    case Verdict::kFail: s += "FAIL"; break;
    case Verdict::kSkip: s += "SKIP (" + toolchain_note + ")"; break;
  }
  if (!problems.empty()) s += "; " + list(problems);
  if (!unknown_keys.empty()) s += "; keys not in the catalog: " + list(unknown_keys);
  if (!missing_targets.empty()) s += "; targets not covered: " + list(missing_targets);
  if (!missing_keys.empty()) s += "; keys not measured: " + list(missing_keys, verdict == Verdict::kSkip ? 1000 : 12);
  if (!missing_cells.empty()) s += "; cells missing: " + list(missing_cells);
  if (verdict == Verdict::kFail && missing_keys.empty() && missing_cells.empty() && problems.empty() &&
      unknown_keys.empty() && missing_targets.empty())
    s += "; " + toolchain_note;
  return s;
}

fs::path provisioned_root(const std::string& flavor) {
  const char* cache = std::getenv("ARCHDB_CACHE");
  const char* home = std::getenv("HOME");
  fs::path base = cache && *cache ? fs::path(cache) : fs::path(home ? home : "/root") / ".cache" / "archdb";
  return base / "roots" / ("sid-" + flavor);
}

bool host_has_toolchain(const std::string& flavor, const std::string& linked_flavor, std::string& note) {
  if (flavor == linked_flavor) {
    note = "this build links it";
    return true;
  }
  std::string major = flavor.size() > 4 ? flavor.substr(4) : "";
  std::error_code ec;
  if (!major.empty() && fs::exists("/usr/lib/llvm-" + major + "/lib/cmake/llvm/LLVMConfig.cmake", ec)) {
    note = "llvm-" + major + "-dev is installed on this host";
    return true;
  }
  // ROCm ships its LLVM under /opt/rocm*/llvm; its major is in LLVMConfig.cmake.
  if (fs::is_directory("/opt", ec)) {
    for (const auto& entry : fs::directory_iterator("/opt", ec)) {
      if (entry.path().filename().string().rfind("rocm", 0) != 0) continue;
      fs::path config = entry.path() / "llvm/lib/cmake/llvm/LLVMConfig.cmake";
      if (!fs::exists(config, ec)) continue;
      std::string text = read_file(config);
      if (text.find("set(LLVM_VERSION_MAJOR " + major + ")") != std::string::npos) {
        note = "the ROCm LLVM in " + entry.path().string() + " is LLVM " + major;
        return true;
      }
    }
  }
  fs::path root = provisioned_root(flavor);
  if (fs::exists(root / ".archdb-root-ok", ec) &&
      fs::exists(root / ("usr/lib/llvm-" + major + "/lib/cmake/llvm/LLVMConfig.cmake"), ec)) {
    note = "a provisioned root has it";
    return true;
  }
  note = "this host has no " + (major.empty() ? flavor : "LLVM " + major) + " toolchain";
  return false;
}

std::vector<FlavorCoverage> check_coverage(const Catalog& catalog, const TargetList& targets,
                                           const fs::path& data_root, const std::string& linked_flavor) {
  std::vector<FlavorCoverage> out;
  std::vector<std::string> keys = catalog.keys();
  for (const auto& flavor : list_column_dirs(data_root)) {
    FlavorCoverage cov;
    cov.flavor = flavor;
    cov.toolchain_here = host_has_toolchain(flavor, linked_flavor, cov.toolchain_note);
    Column column;
    try {
      column = read_column_dir(data_root / flavor);
    } catch (const Error& e) {
      cov.problems.push_back(e.what());
      cov.verdict = FlavorCoverage::Verdict::kFail;
      out.push_back(cov);
      continue;
    }
    cov.cells = static_cast<int>(column.cells.size());
    cov.descriptor = !column.provenance.measured;
    if (cov.descriptor) cov.toolchain_note += "; the column is a descriptor: " + column.provenance.stands_for;
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
    if (!cov.problems.empty() || !cov.unknown_keys.empty()) cov.verdict = FlavorCoverage::Verdict::kFail;
    else if (incomplete) cov.verdict = cov.toolchain_here ? FlavorCoverage::Verdict::kFail : FlavorCoverage::Verdict::kSkip;
    out.push_back(cov);
  }
  bool linked_present = false;
  for (const auto& cov : out) linked_present |= cov.flavor == linked_flavor;
  if (!linked_present) {
    FlavorCoverage cov;
    cov.flavor = linked_flavor;
    cov.toolchain_here = true;
    cov.toolchain_note = "this build links it";
    cov.verdict = FlavorCoverage::Verdict::kFail;
    cov.problems.push_back("no committed column " + (data_root / linked_flavor).string() + " for this host's toolchain");
    out.push_back(cov);
  }
  return out;
}

}  // namespace archdb
