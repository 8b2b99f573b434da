// cli/cmd_check.cpp — `archdb check`: may a kernel be built for a target with a given compiler? Keys, kernel
// IR or a kernel manifest in; one line per intrinsic and a verdict out. Exit 0 cleared, 1 refused (or a
// manifest that does not cover the IR), 2 unvalidated, 3 any error — so a build gate can tell them apart.
#include <cstdio>
#include <filesystem>
#include <set>

#include "checker/checker.h"
#include "checker/ir_reader.h"
#include "checker/manifest.h"
#include "cli/commands.h"
#include "cli/on_demand.h"
#include "cli/table.h"
#include "db/census.h"
#include "support/error.h"

namespace archdb::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> targets;
  std::string flavor;
  std::string compiler;
  std::string keys;
  std::string ir;
  std::string manifest;
  std::string name;
  bool json = false;
  bool warn_only = false;
};

int exit_for(Verdict v) {
  switch (v) {
    case Verdict::kCleared: return 0;
    case Verdict::kRefused: return 1;
    case Verdict::kUnvalidated: return 2;
  }
  return 2;
}

std::string detail(const CheckItem& item) {
  if (item.status == "ok") {
    std::string s;
    for (const auto& m : item.lowered_to) s += (s.empty() ? "" : " ") + m;
    if (!item.evidence.empty()) s += (s.empty() ? "" : "  ") + std::string("[") + item.evidence + "]";
    if (!item.posing.empty()) s += (s.empty() ? "" : "  ") + std::string("[posed with ") + item.posing + "]";
    if (!item.note.empty()) s += (s.empty() ? "" : "  ") + std::string("(") + item.note + ")";
    return s.empty() ? "(no instruction)" : s;
  }
  return item.evidence;
}

// A --flavor the database has nothing about (no column, descriptor, import or census) is a typo or a
// flavor never measured anywhere: an error naming the known ones. A flavor derived from --compiler is asked
// as it is (no column: unvalidated), since the compiler that will build decides it.
void require_known_flavor(const Store& store, const std::string& flavor) {
  std::set<std::string> known;
  for (const FlavorRow& row : store.flavors()) {
    size_t colon = row.name.find(':');  // imported columns are "<format>:<flavor>"
    known.insert(colon == std::string::npos ? row.name : row.name.substr(colon + 1));
  }
  for (const std::string& f : census_flavors(store)) known.insert(f);
  if (known.count(flavor)) return;
  std::string list;
  for (const std::string& f : known) list += (list.empty() ? "" : ", ") + f;
  throw usage_error("unknown flavor '" + flavor + "' (known: " + (list.empty() ? "none" : list) + ")");
}

int check(const Context& ctx, const CheckArgs& args) {
  int inputs = !args.keys.empty() + !args.ir.empty() + !args.manifest.empty();
  if (inputs == 0) throw usage_error("check: give --keys, an IR file (--ir or positional) or --manifest");
  if (!args.keys.empty() && inputs > 1) throw usage_error("check: --keys goes alone (not with --ir or --manifest)");
  if (args.flavor.empty() == args.compiler.empty()) throw usage_error("check: give exactly one of --flavor and --compiler");
  std::string flavor = args.compiler.empty() ? args.flavor : flavor_of_compiler(args.compiler);
  if (!is_valid_flavor(flavor)) throw usage_error("unknown flavor '" + flavor + "' (a flavor is llvm<major>, e.g. llvm22)");

  std::optional<KernelManifest> manifest;
  if (!args.manifest.empty()) manifest = load_manifest(args.manifest);
  std::optional<IrUses> uses;
  // Read in a child: hostile or damaged IR that crashes LLVM is an exit 3 naming the file, not our crash.
  if (!args.ir.empty()) uses = IsolatedIrReader().read_file(args.ir);

  CheckRequest request;
  request.flavor = flavor;
  if (!args.name.empty()) request.subject = args.name;
  else if (manifest) request.subject = manifest->kernel;
  else if (uses && uses->kernels.size() == 1) request.subject = uses->kernels.front();
  else if (uses) request.subject = std::filesystem::path(args.ir).filename().string();
  if (uses) {
    request.intrinsics = uses->target_intrinsics;
    request.generic_intrinsics = uses->generic_intrinsics;
    request.declared_only = uses->declared_only;
    request.declarations = uses->declarations;
  } else {
    request.keys = manifest ? manifest->keys : catalog_keys(ctx.load_catalog(), args.keys);
    if (request.keys.empty()) throw usage_error("check: --keys names no key");
  }

  auto store = ctx.open_store();
  if (!args.flavor.empty()) require_known_flavor(*store, flavor);
  Checker checker(*store, ctx.load_catalog(), ctx.load_targets());
  ProbeOnDemand on_demand(*store);
  checker.set_on_demand(&on_demand);
  ColumnIndex column = ColumnIndex::load(*store, flavor);
  if (manifest)
    for (const std::string& key : manifest->keys)
      if (!checker.catalog().find(key))
        throw usage_error(manifest->path + ": unknown key '" + key + "' (not in " + checker.catalog().path + ")");
  std::vector<std::string> drift;
  if (manifest && uses) drift = manifest_drift(uses->target_intrinsics, manifest->keys, column, checker.catalog());

  std::vector<CheckResult> results;
  for (const std::string& target : args.targets) {
    request.target = target;
    results.push_back(checker.check(request, column));
    // Drift is a refusal of the build on every target: the verdict, the message and the JSON say so.
    if (manifest && uses) results.back().apply_drift(drift);
  }
  // Over several targets the most severe verdict decides.
  Verdict worst = Verdict::kCleared;
  for (const CheckResult& r : results)
    if (r.verdict == Verdict::kRefused || (r.verdict == Verdict::kUnvalidated && worst == Verdict::kCleared)) worst = r.verdict;
  int code = exit_for(worst);

  if (args.json) {
    nlohmann::ordered_json out;
    if (results.size() == 1) {
      out = results.front().to_json();
    } else {
      out = nlohmann::ordered_json::array();
      for (const CheckResult& r : results) out.push_back(r.to_json());
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (const CheckResult& r : results) {
      Table table({"status", "key", "intrinsic", "lowered to / evidence"});
      for (const CheckItem& item : r.items)
        table.add({item.status, item.key.empty() ? "-" : item.key, item.intrinsic, detail(item)});
      std::printf("%s", table.render().c_str());
      if (!r.generic_intrinsics.empty()) {
        std::string list;
        for (const auto& g : r.generic_intrinsics) list += (list.empty() ? "" : " ") + g;
        std::printf("target-independent (not gated): %s\n", list.c_str());
      }
      if (!r.declared_only.empty()) {
        std::string list;
        for (const auto& d : r.declared_only) list += (list.empty() ? "" : " ") + d;
        std::printf("declared, never called (not gated): %s\n", list.c_str());
      }
      for (const std::string& d : r.drift)
        std::printf("drift: %s: %s (manifest %s)\n", request.subject.c_str(), d.c_str(), manifest->path.c_str());
      std::printf("%s\n", r.headline().c_str());
    }
  }
  if (args.warn_only && code != 0) {
    for (const CheckResult& r : results)
      if (r.verdict != Verdict::kCleared) std::fprintf(stderr, "archdb: warning: %s\n", r.headline().c_str());
    return 0;
  }
  return code;
}

}  // namespace

void add_check(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "may a kernel be built for a target? Checks catalog keys, kernel IR (.ll/.bc) or a kernel manifest against the "
      "measured column of a flavor. Exit 0 cleared, 1 refused (or manifest drift), 2 unvalidated, 3 error");
  // One value per --target, so that a positional IR file after it is not taken for a target.
  cmd->add_option("--target", args->targets, "the GPU target, as LLVM names it (an alias such as fiji is its gfx name; repeatable)")
      ->required()
      ->allow_extra_args(false)
      ->transform(processor_name());
  cmd->add_option("--flavor", args->flavor, "the flavor of the compiler that will build (llvm22)");
  cmd->add_option("--compiler", args->compiler, "derive the flavor from this compiler's --version (its LLVM major)");
  cmd->add_option("--keys", args->keys, "catalog keys: KEY,KEY... or @FILE (one key a line)");
  cmd->add_option("--ir,ir", args->ir, "LLVM IR of the kernel (.ll text or .bc bitcode)");
  cmd->add_option("--manifest", args->manifest,
                  "a kernel manifest (JSON); with an IR file, also fails when the IR uses an intrinsic it does not list");
  cmd->add_option("--name", args->name, "the kernel name in messages (default: the manifest's, or the IR's kernel)");
  cmd->add_flag("--json", args->json, "JSON output");
  cmd->add_flag("--warn-only", args->warn_only, "report a refusal or unvalidated verdict as a warning and exit 0");
  cmd->callback([args, &context, &exit_code] {
    try {
      exit_code = check(context, *args);
    } catch (const Error& e) {
      // For check, 2 means unvalidated: every error is 3.
      throw Error(kExitBadInput, e.what());
    }
  });
}

}  // namespace archdb::cli
