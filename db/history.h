// db/history.h — reading columns across flavors: a key's history on a target (in the manner of
// browser-compat data: "ok since llvm22", "removed in llvm23", "unknown before llvm21 (target_unsupported)")
// and the cells that changed between two flavors, grouped by how. Non-answers stay unknowns; they never
// become "no".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "db/column.h"

namespace archdb {

// One flavor's cell for a key on a target; `cell` is null where the flavor has none (not measured).
struct FlavorCell {
  std::string flavor;  // "llvm22", or "rocke-v1:llvm22" for an imported column
  bool imported = false;
  const Cell* cell = nullptr;
};

// Sorts flavor names by LLVM major ("llvm9" before "llvm19"), imported columns after measured ones.
bool flavor_before(const std::string& a, const std::string& b);

// The one-line summary of a target's history over measured flavors (imported ones are not evidence here).
std::string history_summary(const std::vector<FlavorCell>& cells);

// How a cell changed from one flavor to another; "" if it did not. A cell ok in both changed its lowering when
// the call's own instructions (is_plumbing_mnemonic: not the waits, nops and moves around it) or its posing
// changed ("lowering changed"), else only the plumbing did ("lowering churn").
std::string change_group(const Cell& from, const Cell& to);
// The groups in the order diff prints them: capability changes first, churn last.
const std::vector<std::string>& change_groups();
// Whether `name` is one of them; else the error (one line, naming every group) that a diff's caller reports.
bool is_change_group(const std::string& name);
std::string unknown_change_group(const std::string& name);

}  // namespace archdb
