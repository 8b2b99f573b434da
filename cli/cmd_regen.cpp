// cli/cmd_regen.cpp — `archdb regen`: measure this build's LLVM, store the run, write data/<flavor>/; or,
// with --check, measure and compare with the committed column instead.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/table.h"
#include "db/column_files.h"
#include "probe/probe.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::cli {
namespace fs = std::filesystem;

Scope select_scope(const Catalog& catalog, const TargetList& wired, const std::string& only,
                   const std::string& targets, const std::string& keys) {
  Scope scope;
  if (!keys.empty()) {
    for (const auto& k : catalog_keys(catalog, keys)) scope.entries.push_back(catalog.find(k));
  } else {
    for (const auto& e : catalog.entries)
      if (only.empty() || e.key.find(only) != std::string::npos) scope.entries.push_back(&e);
    if (scope.entries.empty()) throw usage_error("--only '" + only + "' matches no catalog key");
  }
  if (targets.empty()) {
    scope.targets = wired.names;
  } else {
    if (split_list(targets).empty()) throw usage_error("--targets names no target");
    std::set<std::string> given;
    for (const auto& t : split_list(targets)) {
      if (!given.insert(t).second) throw usage_error("--targets names '" + t + "' twice");
      if (!wired.contains(t)) {
        std::string names;
        for (const auto& w : wired.names) names += (names.empty() ? "" : ", ") + w;
        throw usage_error("unknown target '" + t + "' (wired targets: " + names + ")");
      }
      // Keep the wired order whatever order they were given in.
    }
    for (const auto& w : wired.names)
      for (const auto& t : split_list(targets))
        if (t == w) scope.targets.push_back(w);
  }
  return scope;
}

namespace {

std::string counts_json(const Column& column) {
  nlohmann::ordered_json j = provenance_to_json(column.provenance)["counts"];
  return j.dump();
}

std::string cell_brief(const Cell* c) {
  if (!c) return "(none)";
  std::string s(status_name(c->status));
  if (c->posed) s += " posed with " + c->posed->describe();
  if (c->status == Status::kOk) {
    std::string lt;
    for (const auto& m : c->lowered_to) lt += (lt.empty() ? "" : " ") + m;
    s += " [" + lt + "]";
    if (!c->mc_check.empty()) s += " mc_check: " + c->mc_check;
  } else {
    s += " (" + c->evidence + ")";
  }
  return s;
}

// Prints the per-target status counts of a column.
void print_summary(const Column& column, const ProbeResult& result) {
  const auto& statuses = storable_statuses();
  std::vector<std::string> header = {"target"};
  for (Status s : statuses) header.emplace_back(status_name(s));
  Table table(header);
  std::map<std::string, std::map<Status, int>> per_target;
  for (const auto& c : column.cells) per_target[c.target][c.status]++;
  for (const auto& t : column.provenance.targets) {
    std::vector<std::string> row = {t};
    for (Status s : statuses) row.push_back(std::to_string(per_target[t][s]));
    table.add(row);
  }
  std::vector<std::string> total = {"all"};
  for (Status s : statuses) total.push_back(std::to_string(column.provenance.counts.at(std::string(status_name(s)))));
  table.add(total);
  std::fputs(table.render().c_str(), stdout);
  std::printf("%s: %d keys x %zu targets = %zu cells in %.2f s (%d workers, %d worker restarts, %d posing probes, %d retried)\n",
              column.provenance.flavor.c_str(), column.provenance.keys, column.provenance.targets.size(),
              column.cells.size(), result.stats.seconds, result.stats.workers, result.stats.worker_deaths,
              result.stats.sweep_probes, result.stats.retried);
  std::string phases;
  for (const auto& [name, secs] : result.stats.phases) phases += fmt::format("{}{} {:.2f} s", phases.empty() ? "" : ", ", name, secs);
  std::printf("phases: %s\n", phases.c_str());
}

struct RegenArgs {
  std::string flavor;
  bool check = false;
  std::string only;
  std::string keys;
  std::string targets;
  int jobs = 0;
  std::string keep_ir;
  int timeout_s = kDefaultTimeoutS;
  std::string inject_hang;
  bool strict_isolation = false;
  int batch = 0;
  std::string immarg_sweep = immarg_sweep_text(kDefaultImmargSweep);
};

int regen(const Context& ctx, const RegenArgs& args) {
  const ToolchainInfo& tc = linked_toolchain();
  if (!is_valid_flavor(args.flavor)) throw usage_error("invalid flavor '" + args.flavor + "' (expected e.g. llvm22)");
  if (args.flavor != tc.flavor())
    throw Error(kExitProbeFailed, "this archdb links LLVM " + tc.llvm_version + " (flavor " + tc.flavor() +
                                      "); it cannot measure " + args.flavor +
                                      ": build it with -DLLVM_DIR=<that LLVM>/lib/cmake/llvm");
  Catalog catalog = ctx.load_catalog();
  TargetList wired = ctx.load_targets();
  Scope scope = select_scope(catalog, wired, args.only, args.targets, args.keys);
  bool partial = !args.only.empty() || !args.keys.empty() || !args.targets.empty();
  fs::path dir = fs::path(ctx.data) / args.flavor;

  // Held from before the committed column is read (a partial regen merges into it) until it is replaced: a
  // second writer of this column waits, and then merges into what the first wrote.
  std::unique_ptr<FileLock> writing;
  if (!args.check) writing = ctx.lock_column(args.flavor);
  // The committed column: compared against (--check) or merged into (a partial regen).
  std::optional<Column> committed;
  if (fs::exists(dir / "column.json")) {
    try {
      committed = read_column_dir(dir);
    } catch (const Error&) {
      if (args.check || partial) throw;  // a full regen replaces a broken column; nothing else may use it
    }
  }
  if (args.check && !committed) throw input_error("no committed column " + dir.string() + " to check against");

  auto store = ctx.open_store(args.flavor);
  ProbeOptions options;
  options.flavor = args.flavor;
  options.targets = scope.targets;
  options.jobs = args.jobs;
  options.timeout_s = args.timeout_s;
  options.keep_ir_dir = args.keep_ir;
  options.inject_hang_key = args.inject_hang;
  options.strict_isolation = args.strict_isolation;
  if (args.batch > 0) options.batch_size = args.batch;
  options.immarg_sweep = parse_immarg_sweep(args.immarg_sweep);
  options.progress = ::isatty(2);
  nlohmann::ordered_json toolchain = provenance_to_json(probe_provenance(options))["toolchain"];
  int64_t run = store->start_run(args.flavor, args.check ? "check" : "regen", toolchain.dump());
  // Whatever ends the run from here on (an unwritable --keep-ir folder, a failed probe, a full disk) closes
  // it as failed, with the reason, unless it was closed already.
  bool closed = false;
  auto measure = [&]() -> int {
    ProbeResult result = run_probe(catalog, scope.entries, options);
    if (!result.probe_errors.empty()) {
      for (const auto& p : result.probe_errors) std::fprintf(stderr, "archdb: probe_error: %s\n", p.c_str());
      std::string msg = std::to_string(result.probe_errors.size()) + " cells could not be probed (probe_error)";
      store->finish_run(run, "failed", counts_json(result.column), msg);
      closed = true;
      throw Error(kExitProbeFailed, msg + "; nothing was written");
    }

    Column column = result.column;
    // What this run changes in the committed column: the line tools/regen-columns reports per flavor.
    int fresh = 0, changed = 0, same = 0;
    for (const auto& c : result.column.cells) {
      const Cell* was = committed ? committed->find(c.key, c.target) : nullptr;
      (was ? (*was == c ? same : changed) : fresh)++;
    }
    auto measured_line = [&] {
      std::printf("%s: %zu cells measured in %.2f s: %d new, %d changed, %d unchanged\n", args.flavor.c_str(),
                  result.column.cells.size(), result.stats.seconds, fresh, changed, same);
    };
    if (partial && committed) {
      const Provenance& old = committed->provenance;
      if (old.posing() != column.provenance.posing() || old.generator_version != column.provenance.generator_version ||
          old.llvm_version != column.provenance.llvm_version || old.identity != column.provenance.identity) {
        if (!args.check) {
          store->finish_run(run, "failed", "", "partial regen over a column made differently");
          closed = true;
          throw Error(kExitProbeFailed, "the committed column " + dir.string() +
                                            " was made by another toolchain or probe posing; run a full regen");
        }
      }
      // Keep every committed cell outside the measured scope.
      std::map<std::pair<std::string, std::string>, Cell> merged;
      for (const auto& c : committed->cells) merged[{c.key, c.target}] = c;
      for (const auto& c : column.cells) merged[{c.key, c.target}] = c;
      // A committed target the targets file no longer wires keeps its cells and its place in the list: a
      // partial regeneration writes only a column that loads.
      Column whole;
      whole.provenance = column.provenance;
      whole.provenance.targets = wired.names;
      for (const auto& t : committed->provenance.targets)
        if (!wired.contains(t)) whole.provenance.targets.push_back(t);
      for (auto& [k, c] : merged) whole.cells.push_back(c);
      whole.sort();
      whole.recount();
      if (!args.check) column = whole;
    }

    if (args.check) {
      int differences = 0;
      const Provenance& old = committed->provenance;
      auto posing_old = old.posing(), posing_new = column.provenance.posing();
      if (old.generator_version != column.provenance.generator_version) {
        std::printf("generator version: %d -> %d\n", old.generator_version, column.provenance.generator_version);
        ++differences;
      }
      for (auto it = posing_new.begin(); it != posing_new.end(); ++it) {
        if (!posing_old.contains(it.key()) || posing_old[it.key()] != it.value()) {
          std::printf("probe %s: %s -> %s\n", it.key().c_str(),
                      posing_old.contains(it.key()) ? posing_old[it.key()].dump().c_str() : "(none)",
                      it.value().dump().c_str());
          ++differences;
        }
      }
      if (old.identity != column.provenance.identity || old.llvm_version != column.provenance.llvm_version)
        std::printf("note: measured with %s; the column was made with %s\n", column.provenance.identity.c_str(),
                    old.identity.c_str());
      for (const auto& c : column.cells) {
        const Cell* was = committed->find(c.key, c.target);
        if (!was || *was != c) {
          std::printf("%s/%s: %s -> %s\n", c.key.c_str(), c.target.c_str(), cell_brief(was).c_str(), cell_brief(&c).c_str());
          ++differences;
        }
      }
      if (!partial) {
        for (const auto& c : committed->cells)
          if (!column.find(c.key, c.target)) {
            std::printf("%s/%s: %s -> (no longer measured)\n", c.key.c_str(), c.target.c_str(), cell_brief(&c).c_str());
            ++differences;
          }
      }
      store->finish_run(run, differences ? "failed" : "ok", counts_json(column),
                        differences ? std::to_string(differences) + " differences" : "");
      closed = true;
      if (differences) {
        std::printf("%s: %d differences from the committed column (%.2f s)\n", args.flavor.c_str(), differences,
                    result.stats.seconds);
        return kExitDifferent;
      }
      std::printf("%s: all %zu measured cells reproduce the committed column (%.2f s)\n", args.flavor.c_str(),
                  column.cells.size(), result.stats.seconds);
      return kExitOk;
    }

    // The files first, then the store with the run's outcome: the run is `ok` only once its files are in
    // place (a full disk fails it, with the reason, and leaves the committed folder whole). Were we killed
    // between the two, the run is found interrupted and the next sync reads the store from data/.
    write_column_dir(ctx.data, column);
    std::string provenance_text = render_column_json(column);
    store->finish_measured_run(run, column, provenance_text, column_digest(column), counts_json(column));
    closed = true;
    print_summary(column, result);
    measured_line();
    std::printf("wrote %s and %s\n", dir.string().c_str(), ctx.db.c_str());
    return kExitOk;
  };
  try {
    return measure();
  } catch (const std::exception& e) {
    if (!closed) {
      auto* fs_error = dynamic_cast<const fs::filesystem_error*>(&e);
      store->finish_run(run, "failed", "", fs_error ? describe(*fs_error) : std::string(e.what()));
    }
    throw;
  }
}

}  // namespace

void add_regen(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<RegenArgs>();
  CLI::App* sub = app.add_subcommand(
      "regen", "Measure this build's LLVM: probe every catalog key on every target, store the run in the database "
               "and write data/<flavor>/ (or compare with it, --check)");
  sub->add_option("--flavor", args->flavor, "the flavor to measure; must be this build's LLVM (e.g. llvm22)")->required();
  sub->add_flag("--check", args->check,
                "measure and compare with the committed column instead of writing; exit 1 on any changed cell or "
                "probe posing");
  CLI::Option* only = sub->add_option("--only", args->only, "measure only keys containing this text");
  sub->add_option("--keys", args->keys, "measure only these catalog keys: KEY,KEY... or @FILE (one key a line)")
      ->excludes(only);
  sub->add_option("--targets", args->targets, "measure only these targets (comma-separated, from schema/targets.txt)");
  sub->add_option("--jobs,-j", args->jobs, "workers at once, at least 1 (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--keep-ir", args->keep_ir, "write each key's probe module as DIR/<key>.ll");
  sub->add_option("--timeout", args->timeout_s, "seconds a probe may take before it is a toolchain_timeout")
      ->default_val(kDefaultTimeoutS)
      ->check(CLI::Range(1, 3600));
  sub->add_option("--immarg-sweep", args->immarg_sweep,
                  "immediate values tried on a negative whose declaration has integer immarg operands")
      ->default_val(immarg_sweep_text(kDefaultImmargSweep));
  sub->add_flag("--strict-isolation", args->strict_isolation,
                "end the worker on every fatal error, lowering refusals included (same column, slower)");
  sub->add_option("--batch", args->batch, "probe kernels per compile job (tuning)")->group("");
  sub->add_option("--inject-hang", args->inject_hang, "testing: make this key's probe hang")->group("");
  sub->callback([&context, &exit_code, args] { exit_code = regen(context, *args); });
}

}  // namespace archdb::cli
