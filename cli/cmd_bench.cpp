// cli/cmd_bench.cpp — `archdb bench` (bench/bench.h), `archdb bench-check` (bench/check_bench.h),
// `archdb bench-gate` (bench/gate_bench.h) and `archdb bench-search` (bench/search_bench.h).
#include <filesystem>

#include "bench/bench.h"
#include "bench/check_bench.h"
#include "bench/gate_bench.h"
#include "bench/search_bench.h"
#include "cli/commands.h"
#include "llvm/toolchain.h"
#include "support/error.h"

namespace archdb::cli {

namespace {
// A benchmark that starts `archdb` processes starts this executable on this command's database, data, catalog
// and target list; the database is brought up to date with data/ first, so that no timed process does it.
template <typename Options>
void spawned_like_this(Context& context, Options& options) {
  context.open_store();
  options.db = context.db;
  options.data = context.data;
  options.catalog = context.catalog;
  options.targets_file = context.targets_file;
  std::error_code ec;
  options.archdb = std::filesystem::read_symlink("/proc/self/exe", ec).string();
}
}  // namespace

void add_bench(CLI::App& app, Context& context, int& exit_code) {
  auto opts = std::make_shared<BenchOptions>();
  auto targets = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Benchmark: the whole column in process (median of --repeat) against the subprocess method "
               "(clang -x ir -O0 -nogpulib + ld.lld per cell) on the same cells, and peak memory");
  sub->add_option("--repeat", opts->repeat, "in-process runs; the median is reported")->default_val(3);
  sub->add_option("--jobs,-j", opts->jobs, "workers (both methods), at least 1")->check(CLI::Range(1, 4096));
  sub->add_option("--clang", opts->clang, "the clang driver of the subprocess method")->default_val("");
  sub->add_option("--every", opts->subprocess_every, "subprocess method on every n-th cell only (extrapolated)")
      ->default_val(1);
  sub->add_option("--targets", *targets, "targets (default: all wired)");
  sub->callback([&context, &exit_code, opts, targets] {
    const ToolchainInfo& tc = linked_toolchain();
    opts->flavor = tc.flavor();
    if (opts->clang.empty()) opts->clang = "clang-" + std::to_string(tc.llvm_major);
    Catalog catalog = context.load_catalog();
    TargetList wired = context.load_targets();
    opts->targets = select_scope(catalog, wired, "", *targets).targets;
    exit_code = run_bench(catalog, *opts);
  });

  auto check = std::make_shared<CheckBenchOptions>();
  CLI::App* bc = app.add_subcommand("bench-check", "Benchmark: checking one kernel's IR against the database");
  bc->add_option("ir", check->ir, "the kernel's IR (.ll or .bc)")->required();
  bc->add_option("--target", check->target, "target")->required();
  bc->add_option("--flavor", check->flavor, "flavor")->required();
  bc->add_option("--repeat", check->repeat, "repetitions (the whole-process figure runs a tenth as many)")->default_val(200);
  bc->add_option("--compare-with", check->compare_archdb,
                 "another archdb executable whose whole `check` process is timed alternately with this one's");
  bc->callback([&context, &exit_code, check] {
    spawned_like_this(context, *check);
    exit_code = run_check_bench(*check);
  });

  auto gate = std::make_shared<GateBenchOptions>();
  CLI::App* bg = app.add_subcommand(
      "bench-gate", "Benchmark: a build gate's matrix (N generated manifests x targets) decided by one `archdb check` "
                    "against one process per pair, alternating, with their verdicts compared");
  bg->add_option("--flavor", gate->flavor, "flavor")->required();
  bg->add_option("--manifests", gate->manifests, "generated manifests")->default_val(1000);
  bg->add_option("--targets", gate->targets, "targets (default: the gate's six)")->delimiter(',')->transform(processor_name());
  bg->add_option("--rounds", gate->rounds, "rounds, each timing both ways")->default_val(3);
  bg->add_option("--every", gate->every, "the per-pair way runs every Nth pair, extrapolated")->default_val(30);
  bg->callback([&context, &exit_code, gate] {
    spawned_like_this(context, *gate);
    exit_code = run_gate_bench(*gate);
  });

  auto search = std::make_shared<SearchBenchOptions>();
  CLI::App* bs = app.add_subcommand(
      "bench-search", "Benchmark: finding a name (archdb search, /v1/search): the index's build, one search and one "
                      "resolution on it, and a whole `archdb search` process");
  bs->add_option("--repeat", search->repeat, "repetitions of each search")->default_val(200)->check(CLI::Range(1, 1000000));
  bs->callback([&context, &exit_code, search] {
    spawned_like_this(context, *search);
    exit_code = run_search_bench(*search);
  });
}

}  // namespace archdb::cli
