// cli/key_cells.h — one key's cells across the columns in the database, as `query` and `history` show them:
// columns by LLVM major (imported ones last), targets in the wired order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/context.h"

namespace archdb::cli {

struct KeyCells {
  std::vector<FlavorRow> flavors;                             // the columns shown, in order
  std::map<std::string, std::map<std::string, Cell>> cells;   // flavor -> target -> cell
  std::vector<std::string> targets;                           // the targets shown, in order

  const Cell* find(const std::string& flavor, const std::string& target) const;
};

// `only_flavors` and `only_targets` narrow the view (empty: all). Throws usage_error for an unknown key
// (suggesting keys that contain it), flavor or target.
KeyCells gather_key_cells(const Context& ctx, const Store& store, const std::string& key,
                          const std::vector<std::string>& only_flavors, const std::vector<std::string>& only_targets);

}  // namespace archdb::cli
