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

// Processor-name syntax: "gfx" followed by [0-9a-z-], e.g. "gfx942", "gfx11-generic".
bool is_valid_target_name(const std::string& name);

}  // namespace archdb
