// schema/targets.h — the wired GPU targets (schema/targets.txt): every column has a cell for each.
#pragma once

#include <string>
#include <vector>

namespace archdb {

struct TargetList {
  std::string path;
  std::vector<std::string> names;  // in file order, unique

  bool contains(const std::string& name) const;
};

TargetList parse_targets(const std::string& text, const std::string& path);
TargetList load_targets(const std::string& path);

// Target-name syntax: a processor, "gfx" followed by [0-9a-z-] ("gfx942", "gfx11-generic"), optionally with
// the features it is measured with, ":" and LLVM's -mattr form ("gfx1100:+wavefrontsize64,-wavefrontsize32").
bool is_valid_target_name(const std::string& name);
// The parts of a target name: "gfx1100" and "+wavefrontsize64,-wavefrontsize32" ("" for a plain processor).
std::string target_processor(const std::string& target);
std::string target_features(const std::string& target);
// A target that runs 64 lanes by its features ("gfx1100:+wavefrontsize64,-wavefrontsize32").
bool is_wave64_target(const std::string& target);

}  // namespace archdb
