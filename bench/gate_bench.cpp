// bench/gate_bench.cpp — see gate_bench.h. The manifests are generated from the catalog (three keys each,
// spread over it), in a temporary folder removed afterwards.
#include "bench/gate_bench.h"


#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "schema/catalog.h"
#include "support/error.h"
#include "support/files.h"
#include "support/spawn.h"
#include "support/text.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int run_gate_bench(const GateBenchOptions& o) {
  if (o.manifests < 1 || o.rounds < 1 || o.every < 1) throw usage_error("bench-gate: counts must be at least 1");
  std::vector<std::string> targets = o.targets;
  if (targets.empty()) targets = {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"};
  std::vector<std::string> keys = load_catalog(o.catalog).keys();
  if (keys.size() < 3) throw usage_error("bench-gate: the catalog has fewer than 3 keys");

  TempFolder tmp("archdb-bench-gate");
  std::string list;
  std::vector<std::string> kernels;
  for (int i = 0; i < o.manifests; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "kernel%04d", i);
    nlohmann::json m = {{"schema", "archdb.kernel-manifest/v1"},
                        {"kernel", name},
                        {"source", "kernels/generated.hip"},
                        {"keys", {keys[(i * 7) % keys.size()], keys[(i * 7 + 61) % keys.size()],
                                  keys[(i * 7 + 127) % keys.size()]}}};
    write_file_atomically(tmp.path() / (std::string(name) + ".json"), m.dump(2) + "\n");
    list += std::string(name) + ".json\n";
    kernels.push_back(name);
  }
  write_file_atomically(tmp.path() / "manifests.txt", list);

  auto base = [&] {
    return std::vector<std::string>{o.archdb, "--db", o.db, "--data", o.data, "--catalog", o.catalog,
                                    "--targets-file", o.targets_file, "check", "--flavor", o.flavor};
  };
  std::vector<std::string> batch = base();
  batch.insert(batch.end(), {"--manifest", "@" + (tmp.path() / "manifests.txt").string(), "--json-dir",
                             (tmp.path() / "answers").string()});
  for (const auto& t : targets) batch.insert(batch.end(), {"--target", t});
  auto pair_args = [&](size_t pair) {
    std::vector<std::string> a = base();
    a.insert(a.end(), {"--manifest", (tmp.path() / (kernels[pair / targets.size()] + ".json")).string(), "--target",
                       targets[pair % targets.size()]});
    return a;
  };
  auto timed = [](const std::vector<std::string>& argv, int* code = nullptr) {
    auto start = Clock::now();
    int rc = run_child(argv);
    if (code) *code = rc;
    if (rc > 2) throw internal_error("bench-gate: `archdb check` exited " + std::to_string(rc));
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };

  const size_t pairs = kernels.size() * targets.size();
  timed(batch);  // warm-up: the database brought up to date, the page cache filled
  std::vector<double> batch_ms, single_ms, pair_ms;
  std::map<size_t, int> pair_codes;
  for (int round = 0; round < o.rounds; ++round) {
    batch_ms.push_back(timed(batch));
    single_ms.push_back(timed(pair_args(0)));
    // The sampled pairs, spread over the rounds so that both ways see the same load.
    for (size_t p = static_cast<size_t>(round) * o.every / o.rounds; p < pairs; p += o.every) {
      int code = 0;
      pair_ms.push_back(timed(pair_args(p), &code));
      pair_codes[p] = code;
    }
  }
  // The batch's answers against the per-pair processes' exit codes (0 cleared, 1 refused, 2 unvalidated).
  size_t agree = 0;
  for (const auto& [p, code] : pair_codes) {
    fs::path answer = tmp.path() / "answers" / (kernels[p / targets.size()] + ".json");
    std::string verdict = nlohmann::json::parse(read_file(answer.string()))[targets[p % targets.size()]]["verdict"];
    int expected = verdict == "cleared" ? 0 : verdict == "refused" ? 1 : 2;
    agree += expected == code;
  }

  const double per_pair = median(pair_ms), batch_median = median(batch_ms), single = median(single_ms);
  const double per_pair_total = per_pair * pairs;
  std::printf("gate decisions: %d manifests x %zu targets = %zu pairs, %s (%s)\n", o.manifests, targets.size(), pairs,
              o.flavor.c_str(), join(targets, " ").c_str());
  std::printf("%-58s %12s\n", "way (medians of the rounds)", "ms");
  std::printf("%-58s %12.1f\n", "batch: one `archdb check`, every manifest and target", batch_median);
  std::printf("%-58s %12.1f\n", "one `archdb check` of one manifest on one target", single);
  std::printf("%-58s %12.1f\n", ("one process per pair, per process (" + std::to_string(pair_ms.size()) +
                                 " sampled: every " + std::to_string(o.every) + "th pair)").c_str(),
              per_pair);
  std::printf("%-58s %12.1f\n", ("one process per pair, all " + std::to_string(pairs) + " (extrapolated)").c_str(),
              per_pair_total);
  std::printf("batch rounds: ");
  for (double ms : batch_ms) std::printf("%.1f ", ms);
  std::printf("ms\n");
  std::printf("ratio: the per-pair way / the batch = %.1fx; the batch / one check process = %.2fx\n",
              batch_median > 0 ? per_pair_total / batch_median : 0.0, single > 0 ? batch_median / single : 0.0);
  std::printf("verdicts: the batch and the per-pair processes agree on %zu of %zu sampled pairs\n", agree,
              pair_codes.size());
  return agree == pair_codes.size() ? kExitOk : kExitDifferent;
}

}  // namespace archdb
