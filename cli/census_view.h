// cli/census_view.h — the census and the front end on the command line beyond `archdb census` itself:
// `frontend`, `disagreements`, `findings`, and the census fallback of `query` for names outside the catalog.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace archdb::cli {

// Registers `frontend`, `disagreements` and `findings`.
void add_census_reports(CLI::App& app, Context& context, int& exit_code);

// `query NAME` for a name outside the catalog: the census cells of that intrinsic or instantiation, marked
// as census. Returns false (printing nothing) when no census knows the name. `resolved` (asked, how), where
// given, says first how the question led here ("resolved" in JSON).
bool query_census(const Context& ctx, const Store& store, const std::string& name,
                  const std::vector<std::string>& only_flavors, const std::vector<std::string>& only_targets, bool json,
                  const std::pair<std::string, std::string>& resolved = {});

}  // namespace archdb::cli
