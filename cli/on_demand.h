// cli/on_demand.h — the checker's on-demand measurer for this build's own flavor: an instantiation no census
// measured, or a call posed otherwise than the cell that would answer it, is measured by the probe (forked
// workers, as every measurement) and kept in the store's on_demand_call table (db/census.h), so that the next
// check reads it.
#pragma once

#include "checker/checker.h"
#include "db/store.h"

namespace archdb::cli {

class ProbeOnDemand : public OnDemandMeasurer {
 public:
  explicit ProbeOnDemand(Store& store) : store_(store) {}
  bool measures(const std::string& flavor) const override;
  std::optional<Cell> measure(const std::string& flavor, const std::string& instantiation,
                              const std::string& declaration, const std::string& target,
                              const std::optional<CallPosing>& call) override;

 private:
  Store& store_;
};

}  // namespace archdb::cli
