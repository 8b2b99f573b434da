// cli/cmd_census.cpp — `archdb census`: every llvm.amdgcn.* intrinsic of this build's LLVM on every processor
// it knows (probe/census.h), stored in the database and committed as data/<flavor>/census.txt; its export
// and its summary.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include <fmt/core.h>

#include "cli/census_view.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "db/census.h"
#include "db/frontend.h"
#include "probe/census.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::cli {
namespace fs = std::filesystem;

namespace {

struct CensusArgs {
  std::string flavor;
  int jobs = 0;
  std::string only;
  std::string processors;
  int timeout_s = 10;
  int cpu_budget_ms = 50;
  int retry_cpu_budget_ms = 100;
  int retries = 1;
  int max_instantiations = 1;
  int max_candidates = 64;
  std::string immarg_sweep = immarg_sweep_text(kDefaultImmargSweep);
  std::string export_file;
  bool summary = false;
};

// Peak resident memory, in MiB, of this process and of the largest process it waited for (the workers).
double peak_mib(int who) {
  struct rusage usage {};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void print_census_summary(const Census& census) {
  const CensusProvenance& p = census.provenance;
  std::map<std::string, std::map<Status, int>> per_target;
  for (const auto& c : census.cells) per_target[c.target][c.status]++;
  std::vector<std::string> header = {"processor"};
  for (Status s : storable_statuses()) header.emplace_back(status_name(s));
  Table table(header);
  for (const auto& t : p.processors) {
    std::vector<std::string> row = {t};
    for (Status s : storable_statuses()) row.push_back(std::to_string(per_target[t][s]));
    table.add(row);
  }
  std::vector<std::string> total = {"all"};
  for (Status s : storable_statuses()) total.push_back(std::to_string(p.counts.at(std::string(status_name(s)))));
  table.add(total);
  std::fputs(table.render().c_str(), stdout);
  int overloaded = 0, lowers_nowhere = 0;
  for (const auto& i : census.instantiations) {
    if (i.overload_types.empty()) continue;
    ++overloaded;
    bool ok = false;
    for (const auto& t : p.processors)
      if (const Cell* c = census.find(i.key, t); c && c->status == Status::kOk) ok = true;
    lowers_nowhere += !ok;
  }
  std::printf("%s census (LLVM %s): %d intrinsics, %d instantiations (%d of overloaded intrinsics, %d of them lowered "
              "on no processor), %d not probed, %zu processors, %zu cells\n",
              p.flavor.c_str(), p.llvm_version.c_str(), p.intrinsics, p.instantiations, overloaded, lowers_nowhere,
              p.not_probed, p.processors.size(), census.cells.size());
}

int census_command(const Context& ctx, const CensusArgs& args) {
  const ToolchainInfo& tc = linked_toolchain();
  if (!is_valid_flavor(args.flavor)) throw usage_error("invalid flavor '" + args.flavor + "' (expected e.g. llvm22)");

  bool partial_scope = !args.only.empty() || !args.processors.empty();
  if ((!args.export_file.empty() || args.summary) && !partial_scope) {
    // The stored census, as it is: no measuring.
    auto store = ctx.open_store();
    std::optional<Census> census = load_census(*store, args.flavor);
    if (!census)
      throw usage_error("no census of " + args.flavor + " in the database (run `archdb census --flavor " + args.flavor + "`)");
    if (!args.export_file.empty()) {
      write_file_atomically(args.export_file, render_census_jsonl(*census));
      std::printf("wrote %zu census cells of %s to %s\n", census->cells.size(), args.flavor.c_str(), args.export_file.c_str());
    }
    if (args.summary) print_census_summary(*census);
    return kExitOk;
  }

  if (args.flavor != tc.flavor())
    throw Error(kExitProbeFailed, "this archdb links LLVM " + tc.llvm_version + " (flavor " + tc.flavor() +
                                      "); it cannot take the census of " + args.flavor +
                                      ": build it with -DLLVM_DIR=<that LLVM>/lib/cmake/llvm");
  CensusOptions options;
  options.flavor = args.flavor;
  options.intrinsics = split_list(args.only);
  options.processors = split_list(args.processors);
  options.jobs = args.jobs;
  options.timeout_s = args.timeout_s;
  options.cpu_budget_ms = args.cpu_budget_ms;
  options.retry_cpu_budget_ms = args.retry_cpu_budget_ms;
  options.retries = args.retries;
  options.max_instantiations = args.max_instantiations;
  options.max_candidates = args.max_candidates;
  options.immarg_sweep = parse_immarg_sweep(args.immarg_sweep);
  options.progress = ::isatty(2);
  {
    auto store = ctx.open_store();
    if (std::optional<Frontend> fe = load_frontend(*store, args.flavor)) {
      std::set<std::string> calls;
      for (const FrontendCell& c : fe->cells) calls.insert(c.emitted.begin(), c.emitted.end());
      options.clang_calls.assign(calls.begin(), calls.end());
      options.clang = fe->provenance.clang;
    }
  }
  bool partial = !options.intrinsics.empty() || !options.processors.empty();

  CensusRun run = run_census(options);
  if (options.progress) std::fprintf(stderr, "\r\033[K");
  print_census_summary(run.census);
  std::string phases = fmt::format("instantiation {:.2f} s ({} candidates)", run.plan_seconds, run.candidates_tried);
  for (const auto& [name, secs] : run.stats.phases) phases += fmt::format(", {} {:.2f} s", name, secs);
  std::printf("wall %.1f s; phases: %s; %d workers, %d worker restarts, %d posing probes (%d for refusals, %d for "
              "no instruction, %d for rejected assembly, %d for crashes), %d search candidates, %d retried; peak memory: this process "
              "%.0f MiB, the largest worker %.0f MiB\n",
              run.seconds, phases.c_str(), run.stats.workers, run.stats.worker_deaths, run.stats.sweep_probes,
              run.stats.posed_refused, run.stats.posed_no_instruction, run.stats.posed_rejected, run.stats.posed_crashed, run.search_candidates,
              run.stats.retried, peak_mib(RUSAGE_SELF), peak_mib(RUSAGE_CHILDREN));
  for (size_t r = 0; r < run.search.size(); ++r)
    std::printf("search round %zu: %zu intrinsics lowered nowhere, %zu candidates measured, %zu lowered\n", r + 1,
                run.search[r].intrinsics, run.search[r].candidates, run.search[r].found);
  std::printf("clang's instantiations: %zu llvm.amdgcn.* calls clang makes of its builtins, %zu of them new rows "
              "measured everywhere, %zu unread\n", run.clang.calls, run.clang.rows, run.clang.unread.size());
  for (const std::string& u : run.clang.unread) std::printf("  unread: %s\n", u.c_str());
  std::printf("layout search: %zu intrinsics sought where their family lowers, %zu candidates measured, %zu kept\n",
              run.layout.intrinsics, run.layout.candidates, run.layout.found);
  std::printf("the slowest kernel answered took %.1f ms of CPU time (budgets %d ms, %d ms on the retry)\n",
              run.stats.slowest_answer_cpu_ms, options.cpu_budget_ms, options.retry_cpu_budget_ms);
  if (!run.probe_errors.empty()) {
    for (const auto& p : run.probe_errors) std::fprintf(stderr, "archdb: probe_error: %s\n", p.c_str());
    throw Error(kExitProbeFailed, std::to_string(run.probe_errors.size()) +
                                      " census cells could not be probed (probe_error); nothing was written");
  }
  if (!args.export_file.empty()) {
    write_file_atomically(args.export_file, render_census_jsonl(run.census));
    std::printf("wrote %zu census cells to %s\n", run.census.cells.size(), args.export_file.c_str());
  }
  if (partial) {
    std::printf("a partial census (--only/--processors) is not stored or committed\n");
    return kExitOk;
  }
  // The store first, then the file: were we killed between the two, the next sync follows the file. A
  // regeneration of the column carries census.txt over: it must not be replacing the folder meanwhile.
  auto writing = ctx.lock_column(args.flavor);
  auto store = ctx.open_store();
  std::string text = render_census(run.census);
  store_census(*store, run.census, digest_hex(text));
  write_file_atomically(fs::path(ctx.data) / args.flavor / kCensusFile, text);
  std::printf("wrote %s (%.1f MiB) and %s\n", (fs::path(ctx.data) / args.flavor / kCensusFile).string().c_str(),
              static_cast<double>(text.size()) / (1024.0 * 1024.0), ctx.db.c_str());
  return kExitOk;
}

}  // namespace

void add_census(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<CensusArgs>();
  CLI::App* sub = app.add_subcommand(
      "census", "Probe every llvm.amdgcn.* intrinsic of this build's LLVM on every AMDGPU processor it knows; store "
                "it and write data/<flavor>/census.txt (or, with --export/--summary alone, show the stored census)");
  sub->add_option("--flavor", args->flavor, "the flavor; to measure, this build's LLVM (e.g. llvm22)")->required();
  sub->add_option("--jobs,-j", args->jobs, "workers at once, at least 1 (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--export", args->export_file,
                  "write the full cells as JSON lines to FILE (without --only/--processors: the stored census, not measured)");
  sub->add_flag("--summary", args->summary, "print the stored census's figures (without measuring)");
  sub->add_option("--only", args->only, "measure only these intrinsics (comma-separated); not stored")->group("Partial");
  sub->add_option("--processors", args->processors, "measure only these processors (comma-separated); not stored")
      ->group("Partial");
  sub->add_option("--cpu-budget", args->cpu_budget_ms,
                  "milliseconds of CPU time a probe kernel's codegen may take before it is a toolchain_timeout")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  sub->add_option("--retry-cpu-budget", args->retry_cpu_budget_ms,
                  "the same for the retry of a crash or timeout (alone in a fresh worker)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  sub->add_option("--timeout", args->timeout_s,
                  "wall-clock seconds a probe kernel may take whatever its CPU time (a hang that does not compute)")
      ->default_val(10)
      ->check(CLI::Range(1, 3600));
  sub->add_option("--retries", args->retries, "retries of each non-answer")->default_val(1)->check(CLI::Range(0, 5));
  sub->add_option("--max-instantiations", args->max_instantiations,
                  "instantiations measured per overloaded intrinsic (the first accepted candidate combinations)")
      ->default_val(1)
      ->check(CLI::Range(1, 64));
  sub->add_option("--max-candidates", args->max_candidates, "candidate combinations tried per overloaded intrinsic")
      ->default_val(64)
      ->check(CLI::Range(1, 100000));
  sub->add_option("--immarg-sweep", args->immarg_sweep,
                  "immediate values tried on a negative whose declaration has integer immarg operands")
      ->default_val(immarg_sweep_text(kDefaultImmargSweep));
  sub->callback([&context, &exit_code, args] { exit_code = census_command(context, *args); });
  add_census_reports(app, context, exit_code);
}

}  // namespace archdb::cli
