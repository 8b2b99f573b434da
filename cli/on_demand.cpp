// cli/on_demand.cpp — see on_demand.h.
#include "cli/on_demand.h"

#include "db/census.h"
#include "probe/census.h"
#include "probe/probe.h"
#include "llvm/toolchain.h"

namespace archdb::cli {

bool ProbeOnDemand::measures(const std::string& flavor) const {
  initialize_amdgpu();
  return flavor == linked_toolchain().flavor();
}

std::optional<Cell> ProbeOnDemand::measure(const std::string& flavor, const std::string& instantiation,
                                           const std::string& declaration, const std::string& target,
                                           const std::optional<CallPosing>& call) {
  Catalog catalog;
  catalog.path = "(on demand)";
  CatalogEntry entry;
  entry.key = "on.demand";
  entry.spec.kind = DeclSpec::Kind::kDeclare;
  entry.spec.name = instantiation;
  entry.spec.declare_text = declaration;
  catalog.entries.push_back(entry);
  CensusOptions census;
  census.flavor = flavor;
  ProbeOptions options = census_probe_options(census);  // budgets as the census it stands beside
  options.targets = {target};
  options.call = call;  // a call is measured as the kernel poses it, and no other way
  options.jobs = 1;
  ProbeResult result = run_probe(catalog, {&catalog.entries.front()}, options);
  if (!result.probe_errors.empty() || result.column.cells.size() != 1) return std::nullopt;
  Cell cell = result.column.cells.front();
  // Answered only for exactly the name the kernel calls (a declaration LLVM resolves to another is not it).
  if (cell.intrinsic != instantiation) return std::nullopt;
  cell.key = instantiation;
  store_on_demand_cell(store_, flavor, cell, call, linked_toolchain().identity);
  return cell;
}

}  // namespace archdb::cli
