// db/history.h — reading columns across flavors: a key's history on a target (in the manner of
// browser-compat data: "ok since llvm22", "removed in llvm23", "unknown before llvm21 (target_unsupported)")
// and the cells that changed between two flavors, grouped by how. Non-answers stay unknowns; they never
// become "no".
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/census.h"
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

// A history's body, for a key's columns and an intrinsic's censuses alike: per target, each flavor's cell (null
// where it has none) and the summary — the "targets" object of `archdb history --json` and GET /v1/history.
// Census answers name the instantiation that decided them (`instantiation`).
using HistoryRowFor = std::function<std::vector<FlavorCell>(const std::string& target)>;
nlohmann::ordered_json history_targets_json(const std::vector<std::string>& targets, const HistoryRowFor& row_for,
                                            bool instantiation);

// An intrinsic outside the catalog across the censuses: per processor, each flavor's answer over every
// instantiation that flavor's census measured of it (intrinsic_answers).
struct CensusOfIntrinsic {
  std::string flavor;
  std::vector<CensusInstantiation> instantiations;  // empty: this census did not measure it
  std::vector<Cell> cells;                          // theirs, sorted by (key, target)
};
struct IntrinsicHistory {
  std::string name;                                               // llvm.amdgcn.*
  std::vector<std::string> flavors;                               // the censuses that measured it, oldest first
  std::map<std::string, std::vector<std::string>> instantiations;  // flavor -> the rows weighed
  std::vector<std::string> processors;                            // answered by any, sorted
  std::map<std::pair<std::string, std::string>, Cell> answers;    // (flavor, processor) -> the answer

  bool empty() const { return flavors.empty(); }
  std::vector<FlavorCell> row(const std::string& processor) const;
  // The document of `archdb history NAME --json` and GET /v1/history/NAME.
  nlohmann::ordered_json to_json() const;
};
IntrinsicHistory intrinsic_history(const std::string& name, const std::vector<CensusOfIntrinsic>& censuses,
                                   const std::vector<std::string>& only_targets = {});

// How a cell changed from one flavor to another; "" if it did not. A cell ok in both changed its lowering when
// the call's own instructions (is_plumbing_mnemonic: not the waits, nops and moves around it) or its posing
// changed ("lowering changed"), else only the plumbing did ("lowering churn").
std::string change_group(const Cell& from, const Cell& to);
// Whether a diff narrowed to `targets` (empty: all) keeps a cell of `target`: one named, or a featured target of
// a processor named ("gfx1100" keeps "gfx1100:+wavefrontsize64,-wavefrontsize32").
bool diff_keeps_target(const std::vector<std::string>& targets, const std::string& target);
// The groups in the order diff prints them: capability changes first, churn last.
const std::vector<std::string>& change_groups();
// Whether `name` is one of them; else the error (one line, naming every group) that a diff's caller reports.
bool is_change_group(const std::string& name);
std::string unknown_change_group(const std::string& name);

}  // namespace archdb
