// cli/cmd_coverage.cpp — `archdb coverage`: the coverage gate over the committed columns.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "db/coverage.h"
#include "llvm/toolchain.h"
#include "support/error.h"

namespace archdb::cli {

void add_coverage(CLI::App& app, Context& context, int& exit_code) {
  CLI::App* sub = app.add_subcommand(
      "coverage",
      "Check every committed column: every catalog key on every wired target. Exit 1 if any measured column "
      "is incomplete or invalid, whichever LLVM this host has (each failure names the tools/regen-columns command "
      "that fills it); a descriptor column (no cells, measured elsewhere) is a one-line skip");
  auto only = std::make_shared<std::string>();
  sub->add_option("--flavor", *only, "only this column; a descriptor's line is followed by how to measure it");
  sub->callback([&context, &exit_code, only] {
    Catalog catalog = context.load_catalog();
    TargetList targets = context.load_targets();
    auto report = check_coverage(catalog, targets, context.data, linked_toolchain().flavor());
    if (!only->empty()) {
      std::string names;
      for (const auto& cov : report) names += (names.empty() ? "" : ", ") + cov.flavor;
      report.erase(std::remove_if(report.begin(), report.end(),
                                  [&](const FlavorCoverage& cov) { return cov.flavor != *only; }),
                   report.end());
      if (report.empty()) throw usage_error("unknown flavor '" + *only + "' (columns in " + context.data + ": " + names + ")");
    }
    int failed = 0;
    for (const auto& cov : report) {
      std::printf("%s\n", cov.summary().c_str());
      if (!only->empty())
        for (const auto& step : cov.how_to_measure) std::printf("  %s\n", step.c_str());
      failed += cov.result == FlavorCoverage::Result::kFail;
    }
    int skipped = 0;
    for (const auto& cov : report) skipped += cov.result == FlavorCoverage::Result::kSkip;
    std::printf("%zu keys x %zu targets; %zu columns, %d failing, %d skipped (descriptors)\n", catalog.entries.size(),
                targets.names.size(), report.size(), failed, skipped);
    exit_code = failed ? kExitDifferent : kExitOk;
  });
}

}  // namespace archdb::cli
