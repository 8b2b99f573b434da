// cli/cmd_coverage.cpp — `archdb coverage`: the coverage gate over the committed columns.
#include <cstdio>

#include "cli/commands.h"
#include "db/coverage.h"
#include "probe/toolchain.h"
#include "support/error.h"

namespace archdb::cli {

void add_coverage(CLI::App& app, Context& context, int& exit_code) {
  CLI::App* sub = app.add_subcommand(
      "coverage",
      "Check every committed column: every catalog key on every wired target. Exit 1 if a column of a toolchain "
      "this host has is incomplete or any column is invalid; columns of toolchains this host lacks are named "
      "skips");
  sub->callback([&context, &exit_code] {
    Catalog catalog = context.load_catalog();
    TargetList targets = context.load_targets();
    auto report = check_coverage(catalog, targets, context.data, linked_toolchain().flavor());
    int failed = 0;
    for (const auto& cov : report) {
      std::printf("%s\n", cov.summary().c_str());
      failed += cov.verdict == FlavorCoverage::Verdict::kFail;
    }
    std::printf("%zu keys x %zu targets; %zu columns, %d failing\n", catalog.entries.size(), targets.names.size(),
                report.size(), failed);
    exit_code = failed ? kExitDifferent : kExitOk;
  });
}

}  // namespace archdb::cli
