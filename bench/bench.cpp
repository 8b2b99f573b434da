// bench/bench.cpp — see bench.h. Figures are medians and ratios measured in the same run on the same cells;
// nothing here asserts a target, it prints what it measured.
#include "bench/bench.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "probe/probe.h"
#include "probe/pool.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/spawn.h"

extern char** environ;

namespace archdb {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long max_rss_kib(int who) {
  struct rusage ru {};
  getrusage(who, &ru);
  return ru.ru_maxrss;
}

struct Command {
  std::vector<std::string> argv;
};

// Runs every command, `jobs` at a time; returns how many failed (a failing compile is an answer too).
int run_all(const std::vector<Command>& commands, int jobs) {
  size_t next = 0;
  int running = 0, failed = 0;
  while (next < commands.size() || running > 0) {
    while (running < jobs && next < commands.size()) {
      const auto& c = commands[next++];
      spawn_child(c.argv);  // output and errors go nowhere: a failing compile is an answer too
      ++running;
    }
    int status = 0;
    if (::wait(&status) > 0) {
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
  }
  return failed;
}

}  // namespace

int run_bench(const Catalog& catalog, const BenchOptions& options) {
  std::vector<const CatalogEntry*> entries;
  for (const auto& e : catalog.entries) entries.push_back(&e);
  ProbeOptions probe;
  probe.flavor = options.flavor;
  probe.targets = options.targets;
  probe.jobs = options.jobs;
  int jobs = options.jobs > 0 ? options.jobs : usable_cpus();

  fs::path work = options.work_dir.empty() ? fs::temp_directory_path() / ("archdb-bench-" + std::to_string(::getpid()))
                                           : fs::path(options.work_dir);
  fs::create_directories(work / "ir");

  std::printf("archdb bench: %s (%s), %zu keys x %zu targets, %d workers\n", options.flavor.c_str(),
              linked_toolchain().identity.c_str(), entries.size(), options.targets.size(), jobs);

  // 1. In process, the whole column, `repeat` times; the first run also keeps the probe modules.
  std::vector<double> walls;
  ProbeResult first;
  for (int i = 0; i < std::max(1, options.repeat); ++i) {
    probe.keep_ir_dir = i == 0 ? (work / "ir").string() : "";
    auto t = Clock::now();
    ProbeResult r = run_probe(catalog, entries, probe);
    walls.push_back(seconds_since(t));
    std::printf("  in-process run %d: %.3f s (%zu cells, %d worker restarts, %d posing probes, %d retried)\n", i + 1,
                walls.back(), r.column.cells.size(), r.stats.worker_deaths, r.stats.sweep_probes, r.stats.retried);
    if (i == 0) first = std::move(r);
  }
  double in_process = median(walls);
  long parent_kib = max_rss_kib(RUSAGE_SELF);
  long worker_kib = max_rss_kib(RUSAGE_CHILDREN);

  // 2. The subprocess method on the cells the probe compiled (resolved keys on targets LLVM knows).
  std::vector<Command> commands;
  size_t cells = 0;
  for (const auto& c : first.column.cells) {
    bool compiled = c.status == Status::kOk || c.status == Status::kArchAbsent || is_toolchain_failure(c.status);
    if (!compiled) continue;
    if (cells++ % static_cast<size_t>(std::max(1, options.subprocess_every)) != 0) continue;
    fs::path ll = work / "ir" / (c.key + ".ll");
    fs::path out = work / (c.key + "." + c.target + ".elf");
    commands.push_back({{options.clang, "-x", "ir", "-O0", "-nogpulib", "-target", "amdgcn-amd-amdhsa",
                         "-mcpu=" + c.target, ll.string(), "-o", out.string()}});
  }
  if (commands.empty()) throw internal_error("no compiled cells to compare with");
  auto t = Clock::now();
  int failed = run_all(commands, jobs);
  double sub_wall = seconds_since(t);
  double per_cell_sub = sub_wall / static_cast<double>(commands.size());
  double sub_all = per_cell_sub * static_cast<double>(cells);
  double per_cell_in = in_process / static_cast<double>(first.column.cells.size());

  std::printf("\nresults (%zu cells in the column; %zu compiled cells; %d workers each)\n", first.column.cells.size(),
              cells, jobs);
  std::printf("  in-process regeneration, median of %zu: %.3f s  (%.2f ms a cell)\n", walls.size(), in_process,
              1000 * per_cell_in);
  std::printf("  subprocess method (%s + ld.lld): %zu cells in %.2f s  (%.1f ms a cell; %d compiles failed as expected)\n",
              options.clang.c_str(), commands.size(), sub_wall, 1000 * per_cell_sub, failed);
  if (commands.size() != cells)
    std::printf("  subprocess method, all %zu compiled cells at that rate: %.1f s (extrapolated from every %d-th cell)\n",
                cells, sub_all, options.subprocess_every);
  std::printf("  speed-up, same compiled cells: %.1fx\n", sub_all / in_process);
  std::printf("  peak memory: parent %.0f MiB, largest worker %.0f MiB; at most %.0f MiB at once (%d workers)\n",
              parent_kib / 1024.0, worker_kib / 1024.0, (parent_kib + static_cast<double>(jobs) * worker_kib) / 1024.0,
              jobs);
  fs::remove_all(work);
  return kExitOk;
}

}  // namespace archdb
