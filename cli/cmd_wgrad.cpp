// cli/cmd_wgrad.cpp — `archdb wgrad`: validates a weight-gradient problem, runs the host emulation of a bundled
// kernel variant on seeded data and compares it with the double-precision reference (exit 0 pass, 1 fail,
// 2 invalid problem); `archdb wgrad --list`: the variants, from their manifests.
#include <charconv>
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/table.h"
#include "kernels/wgrad_check.h"
#include "kernels/wgrad_emulate.h"
#include "kernels/wgrad_manifests.h"
#include "kernels/wgrad_problem.h"
#include "kernels/wgrad_reference.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb::cli {
namespace {

using namespace archdb::kernels;

struct WgradCliArgs {
  bool list = false;
  std::string kind = "depthwise", dtype = "f16", variant, manifests, fault = "none";
  WgradProblem problem;
  uint64_t seed = 1;
  CLI::Option* cpg = nullptr;
  // The integer options as typed: CLI11 would clamp 99999999999999999999 to INT64_MAX and wrap a negative
  // seed; they are read here, so an out-of-range value is named as such.
  std::map<std::string, std::string> typed;
};

// A whole decimal integer of int64_t's range, else one line naming the parameter and what was given.
int64_t parse_problem_int(const std::string& name, const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    throw usage_error("invalid wgrad problem: " + name + " is out of range (got " + text + ")");
  if (ec != std::errc() || ptr != end || text.empty())
    throw usage_error("invalid wgrad problem: " + name + " must be an integer (got '" + text + "')");
  return value;
}

// The data seed: any integer from 0 to 2^64-1 (a negative seed is refused, not wrapped).
uint64_t parse_seed(const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);  // no sign: "-1" is not a number here
  if (ec == std::errc() && ptr == end && !text.empty()) return value;
  if (ec == std::errc::result_out_of_range)
    throw usage_error("--seed is out of range: 0 to 18446744073709551615 (got " + text + ")");
  throw usage_error("--seed must be a non-negative integer, 0 to 18446744073709551615 (got '" + text + "')");
}

std::string manifest_dir(const WgradCliArgs& a) {
  return a.manifests.empty() ? std::string(ARCHDB_SOURCE_DIR) + "/kernels/manifests" : a.manifests;
}

int list_variants(const WgradCliArgs& a) {
  const std::vector<KernelManifest> manifests = read_wgrad_manifests(manifest_dir(a));
  std::map<std::string, const KernelManifest*> by_name;
  for (const auto& m : manifests) by_name[m.kernel] = &m;
  Table table({"variant", "kind", "dtype", "path", "source", "defines", "keys", "targets"});
  for (const WgradVariant& v : wgrad_variants()) {
    auto it = by_name.find(v.name);
    if (it == by_name.end()) throw input_error(manifest_dir(a) + ": no manifest for variant " + v.name);
    table.add({v.name, kind_name(v.kind), dtype_name(v.dtype), path_name(v.path), it->second->source,
               join(it->second->defines, ","), join(it->second->keys, ","), join(v.targets, ",")});
    by_name.erase(it);
  }
  if (!by_name.empty()) throw input_error(by_name.begin()->second->path + ": names no bundled variant");
  std::printf("%s", table.render().c_str());
  return kExitOk;
}

EmulationFault parse_fault(const std::string& s) {
  if (s == "swap-b-slices") return EmulationFault::kSwapBSlices;
  if (s == "tr16-no-transpose") return EmulationFault::kTr16NoTranspose;
  if (s == "skip-reduce") return EmulationFault::kSkipReduce;
  return EmulationFault::kNone;
}

int run_wgrad(WgradCliArgs& a) {
  if (a.list) return list_variants(a);
  WgradProblem& p = a.problem;
  const std::map<std::string, int64_t*> fields = {
      {"n", &p.n},           {"c", &p.c},     {"h", &p.h},   {"w", &p.w},
      {"filter", &p.filter}, {"stride", &p.stride}, {"pad", &p.pad}, {"cpg", &p.cpg},
      {"target_blocks", &p.target_blocks}};
  for (const auto& [name, text] : a.typed) {
    if (name == "seed") a.seed = parse_seed(text);
    else *fields.at(name) = parse_problem_int(name, text);
  }
  p.kind = a.kind == "grouped" ? WgradKind::kGrouped : WgradKind::kDepthwise;
  p.dtype = a.dtype == "bf16" ? kDTypeBF16 : kDTypeF16;
  if (a.cpg->count() == 0) p.cpg = p.kind == WgradKind::kGrouped ? 4 : 1;
  validate_problem(p);

  std::vector<const WgradVariant*> variants;
  if (a.variant.empty()) {
    variants.push_back(&default_variant(p.kind, p.dtype));
  } else if (a.variant == "all") {
    for (const auto& v : wgrad_variants())
      if (v.kind == p.kind && v.dtype == p.dtype) variants.push_back(&v);
  } else {
    const WgradVariant* v = find_variant(a.variant);
    if (!v) throw usage_error("unknown wgrad variant '" + a.variant + "' (archdb wgrad --list names them)");
    variants.push_back(v);
  }
  for (const WgradVariant* v : variants) plan_launch(p, *v);  // every check before any work

  std::printf("wgrad: %s\n", p.describe().c_str());
  std::printf("  output %lldx%lld; %lld weights of %lld products each; data seed %llu\n",
              static_cast<long long>(p.ho()), static_cast<long long>(p.wo()), static_cast<long long>(p.dw_elems()),
              static_cast<long long>(p.terms()), static_cast<unsigned long long>(a.seed));
  const auto x = random_inputs(p.dtype, p.x_elems(), a.seed);
  const auto dy = random_inputs(p.dtype, p.dy_elems(), a.seed + 0x5bd1e995ull);
  const WgradReference ref = wgrad_reference(p, x, dy);
  bool all_pass = true;
  for (const WgradVariant* v : variants) {
    const WgradEmulation em = emulate_wgrad(p, *v, x, dy, parse_fault(a.fault));
    const WgradCheck c = check_wgrad(p, em.dw, ref);
    std::printf("variant %s (%s, %s)\n", v->name.c_str(), path_name(v->path).c_str(), v->source.c_str());
    for (const WgradLaunch& l : em.plan.launches)
      std::printf("  launch %-22s grid %dx%dx%d  block %d  lds %d B\n", l.symbol.c_str(), l.grid.x, l.grid.y,
                  l.grid.z, l.block, l.lds_bytes);
    std::printf("  max abs error %.3g  max rel error %.3g  tolerance %.3g  worst error/tolerance %.3g  %s\n",
                c.max_abs_err, c.max_rel_err, c.max_tolerance, c.worst_ratio, c.pass() ? "pass" : "FAIL");
    if (!c.pass())
      std::printf("  %lld of %lld weights outside their tolerance; worst: weight %lld, got %.9g, reference %.9g\n",
                  static_cast<long long>(c.failures), static_cast<long long>(c.weights),
                  static_cast<long long>(c.worst_index), static_cast<double>(em.dw[c.worst_index]),
                  ref.dw[c.worst_index]);
    all_pass &= c.pass();
  }
  return all_pass ? kExitOk : kExitDifferent;
}

}  // namespace

void add_wgrad(CLI::App& app, Context& context, int& exit_code) {
  auto a = std::make_shared<WgradCliArgs>();
  CLI::App* sub = app.add_subcommand(
      "wgrad", "Check a bundled weight-gradient kernel on the CPU: its host emulation against a double reference");
  sub->add_flag("--list", a->list, "list the kernel variants (from their manifests) and exit");
  sub->add_option("--kind", a->kind, "depthwise or grouped")->check(CLI::IsMember({"depthwise", "grouped"}))
      ->capture_default_str();
  sub->add_option("--dtype", a->dtype, "input type, f16 or bf16")->check(CLI::IsMember({"f16", "bf16"}))
      ->capture_default_str();
  // Integer options are taken as text and read by parse_problem_int / parse_seed (see WgradCliArgs).
  auto integer = [&](const char* flag, const char* field, const char* help, const std::string& default_text) {
    return sub->add_option_function<std::string>(flag, [a, field](const std::string& v) { a->typed[field] = v; },
                                                 std::string(help) + (default_text.empty() ? "" : " [" + default_text + "]"));
  };
  const WgradProblem defaults;
  integer("--n", "n", "batch", std::to_string(defaults.n));
  integer("--c", "c", "channels", std::to_string(defaults.c));
  integer("--h", "h", "input height", std::to_string(defaults.h));
  integer("--w", "w", "input width", std::to_string(defaults.w));
  integer("--filter", "filter", "filter size R = S: odd, 3 to 11", std::to_string(defaults.filter));
  integer("--stride", "stride", "1 or 2", std::to_string(defaults.stride));
  integer("--pad", "pad", "padding, 0 <= pad < filter", std::to_string(defaults.pad));
  a->cpg = integer("--cpg", "cpg", "channels per group: 4 or 8 for grouped (default 4), 1 for depthwise", "");
  integer("--target-blocks", "target_blocks", "z split of the reduction, 1 to 65535", std::to_string(defaults.target_blocks));
  sub->add_option("--variant", a->variant, "a variant name, or 'all' for every variant of the kind and dtype "
                                           "(default: the MFMA one)");
  integer("--seed", "seed", "seed of the random inputs, 0 to 2^64-1 (a negative seed is refused)", "1");
  sub->add_option("--manifests", a->manifests, "the manifest folder (default: <checkout>/kernels/manifests)");
  sub->add_option("--fault", a->fault, "")->group("")->check(
      CLI::IsMember({"none", "swap-b-slices", "tr16-no-transpose", "skip-reduce"}));  // tests: a wrong data path
  sub->callback([&exit_code, a] { exit_code = run_wgrad(*a); });
  (void)context;
}

}  // namespace archdb::cli
