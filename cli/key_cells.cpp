// cli/key_cells.cpp — see key_cells.h.
#include "cli/key_cells.h"

#include <algorithm>
#include <set>

#include "cli/commands.h"
#include "db/history.h"
#include "support/error.h"

namespace archdb::cli {

const Cell* KeyCells::find(const std::string& flavor, const std::string& target) const {
  auto f = cells.find(flavor);
  if (f == cells.end()) return nullptr;
  auto t = f->second.find(target);
  return t == f->second.end() ? nullptr : &t->second;
}

KeyCells gather_key_cells(const Context& ctx, const Store& store, const std::string& key,
                          const std::vector<std::string>& only_flavors, const std::vector<std::string>& only_targets) {
  KeyCells out;
  std::vector<FlavorRow> rows = store.flavors();
  std::sort(rows.begin(), rows.end(), [](const FlavorRow& a, const FlavorRow& b) { return flavor_before(a.name, b.name); });
  for (const auto& f : only_flavors)
    if (std::none_of(rows.begin(), rows.end(), [&](const FlavorRow& r) { return r.name == f; }))
      throw usage_error("unknown flavor '" + f + "' (not in the database; see `archdb coverage`)");
  for (const auto& r : rows)
    if (only_flavors.empty() || std::find(only_flavors.begin(), only_flavors.end(), r.name) != only_flavors.end())
      out.flavors.push_back(r);

  std::set<std::string> seen;
  for (const auto& f : out.flavors)
    for (auto& c : store.cells_for_key(f.name, key)) {
      seen.insert(c.target);
      out.cells[f.name][c.target] = c;
    }
  if (seen.empty()) {
    Catalog catalog = ctx.load_catalog();
    if (!catalog.find(key)) throw usage_error(unknown_name_message(ctx, store, key));
    throw usage_error("key '" + key + "' has no cells in the database yet (run `archdb regen`)");
  }
  for (const auto& t : only_targets)
    if (!seen.count(t)) throw usage_error("unknown target '" + t + "' for key '" + key + "'");
  if (!only_targets.empty()) {
    out.targets = only_targets;
    return out;
  }
  // The wired order, then any other target a column holds.
  for (const auto& t : ctx.load_targets().names)
    if (seen.count(t)) out.targets.push_back(t);
  for (const auto& t : seen)
    if (std::find(out.targets.begin(), out.targets.end(), t) == out.targets.end()) out.targets.push_back(t);
  return out;
}

}  // namespace archdb::cli
