// cli/cmd_check.cpp — `archdb check`: may a kernel be built for a target with a given compiler? Keys, kernel
// IR or a kernel manifest in; one line per intrinsic and a verdict out. Exit 0 cleared, 1 refused (or a
// manifest that does not cover the IR), 2 unvalidated, 3 any error — so a build gate can tell them apart.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "checker/checker.h"
#include "checker/hip_source.h"
#include "checker/ir_reader.h"
#include "checker/manifest.h"
#include "cli/commands.h"
#include "cli/on_demand.h"
#include "cli/table.h"
#include "db/census.h"
#include "llvm/toolchain.h"
#include "support/compiler_flavor.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> targets;
  std::string flavor;
  std::string compiler;
  std::string keys;
  std::string ir;
  std::vector<std::string> manifests;  // each a file, or @LIST (one file a line)
  std::vector<std::string> clang_args;  // more arguments for clang compiling a HIP source (-I, -D)
  std::string json_dir;
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
  std::string s;
  if (item.status == "ok") {
    for (const auto& m : item.lowered_to) s += (s.empty() ? "" : " ") + m;
    if (!item.evidence.empty()) s += (s.empty() ? "" : "  ") + std::string("[") + item.evidence + "]";
    if (!item.note.empty()) s += (s.empty() ? "" : "  ") + std::string("(") + item.note + ")";
    if (s.empty()) s = "(no instruction)";
  } else {
    s = item.evidence;
  }
  // Which call the answer holds for: the kernel's, or the cell's where the kernel's is not known.
  if (item.call) s += "  [call: " + item.call->describe() + "]";
  else if (item.posed) s += "  [posed: " + item.posed->describe() + "]";
  return s;
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

// The manifests --manifest names: a file each, or @LIST, a file naming one manifest a line (blank lines and
// '#' comments skipped; a relative path is taken from LIST's folder).
std::vector<std::string> manifest_paths(const std::vector<std::string>& given) {
  std::vector<std::string> paths;
  for (const std::string& g : given) {
    if (g.empty() || g[0] != '@') {
      paths.push_back(g);
      continue;
    }
    std::string list = g.substr(1);
    if (list.empty()) throw usage_error("--manifest @LIST names no file");
    std::filesystem::path base = std::filesystem::path(list).parent_path();
    for (const std::string& item : list_file_items(list)) {
      std::filesystem::path p = item;
      paths.push_back((p.is_absolute() ? p : base / p).string());
    }
  }
  if (paths.empty()) throw usage_error("--manifest names no manifest");
  return paths;
}

// Writes each kernel's answers as DIR/<kernel>.json, an object of its targets' answers (each target as given),
// for a build gate's steps to read: all or none (a kernel named by two manifests is an error before anything is
// written); a file whose answers did not change is left as it is. One file a kernel, not a pair: creating files
// is most of what a batch costs.
void write_json_dir(const std::string& dir, const std::vector<nlohmann::ordered_json>& answers,
                    const std::vector<CheckResult>& results, const std::vector<const KernelManifest*>& from,
                    const std::vector<std::string>& targets_given) {
  std::map<std::string, nlohmann::ordered_json> per_kernel;
  std::map<std::string, const KernelManifest*> kernel_manifest;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& kernel = results[i].subject;
    if (kernel.empty() || kernel.find('/') != std::string::npos || kernel[0] == '.')
      throw usage_error("--json-dir: kernel name '" + kernel + "' cannot name a file");
    auto [at, fresh] = kernel_manifest.emplace(kernel, from[i]);
    if (!fresh && at->second != from[i])
      throw usage_error("--json-dir: kernel '" + kernel + "' is named by " + (from[i] ? from[i]->path : "--keys") +
                        " and " + (at->second ? at->second->path : "--keys"));
    // Keyed by the target as the caller spelled it (a gate asks for what it was given: fiji), the answer
    // naming LLVM's canonical processor (gfx803).
    per_kernel[kernel][targets_given[i % targets_given.size()]] = answers[i];
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir)) throw input_error(dir + ": cannot be made a folder");
  for (const auto& [kernel, answers_by_target] : per_kernel) {
    std::filesystem::path file = std::filesystem::path(dir) / (kernel + ".json");
    std::string text = answers_by_target.dump() + "\n";
    // Unchanged answers keep their file's time, so a build does not redo what depends on them.
    if (std::filesystem::is_regular_file(file, ec) && read_file(file) == text) continue;
    write_file_whole_unsynced(file, text);
  }
}

int check(const Context& ctx, const CheckArgs& args) {
  int inputs = !args.keys.empty() + !args.ir.empty() + !args.manifests.empty();
  if (inputs == 0) throw usage_error("check: give --keys, an IR file (--ir or positional) or --manifest");
  if (!args.keys.empty() && inputs > 1) throw usage_error("check: --keys goes alone (not with --ir or --manifest)");
  if (args.flavor.empty() == args.compiler.empty()) throw usage_error("check: give exactly one of --flavor and --compiler");
  std::string flavor = args.compiler.empty() ? args.flavor : flavor_of_compiler(args.compiler);
  if (!is_valid_flavor(flavor)) throw usage_error("unknown flavor '" + flavor + "' (a flavor is llvm<major>, e.g. llvm22)");

  std::vector<KernelManifest> manifests;
  if (!args.manifests.empty())
    for (const std::string& path : manifest_paths(args.manifests)) manifests.push_back(load_manifest(path));
  if (manifests.size() > 1 && !args.ir.empty())
    throw usage_error("check: --ir goes with one manifest (its kernel's IR), not " + std::to_string(manifests.size()));
  if (manifests.size() > 1 && !args.name.empty()) throw usage_error("check: --name goes with one kernel");
  // A HIP source is compiled by the flavor's clang for each target, then its IR is checked (ask_hip, below).
  const bool hip = !args.ir.empty() && is_hip_source(args.ir);
  if (hip && !args.manifests.empty()) throw usage_error("check: a HIP source goes alone (a manifest names its own)");
  if (!hip && !args.clang_args.empty()) throw usage_error("check: --clang-arg goes with a HIP source");
  // Kernel IR is read in a child: hostile or damaged IR that crashes LLVM is an exit 3 naming the file, not our
  // crash. The reader's zygote is made only where there is IR to read (here, while this process has one thread).
  std::unique_ptr<IsolatedIrReader> reader;
  if (!args.ir.empty()) reader = std::make_unique<IsolatedIrReader>();
  std::optional<IrUses> uses;
  if (!args.ir.empty() && !hip) uses = reader->read_file(args.ir);

  CheckRequest request;
  request.flavor = flavor;
  if (!args.name.empty()) request.subject = args.name;
  else if (uses && uses->kernels.size() == 1) request.subject = uses->kernels.front();
  else if (uses || hip) request.subject = std::filesystem::path(args.ir).filename().string();
  if (uses) {
    add_ir_uses(request, *uses);
  } else if (manifests.empty() && !hip) {
    request.keys = catalog_keys(ctx.load_catalog(), args.keys, /*uncatalogued=*/true);
    if (request.keys.empty()) throw usage_error("check: --keys names no key");
  }

  auto store = ctx.open_store();
  if (!args.flavor.empty()) require_known_flavor(*store, flavor);
  Checker checker(*store, ctx.load_catalog(), ctx.load_targets());
  ProbeOnDemand on_demand(*store);
  checker.set_on_demand(&on_demand);
  ColumnIndex column = ColumnIndex::load(*store, flavor);
  for (const KernelManifest& m : manifests)
    for (const std::string& key : m.keys)
      if (!checker.catalog().find(key) && !names_uncatalogued(key))
        throw usage_error(m.path + ": unknown key '" + key + "' (neither in " + checker.catalog().path +
                          " nor " + std::string(kUncataloguedNames) + ")");

  // Targets as cells name them, resolved once however many kernels; args.targets keeps the spelling given.
  std::vector<std::string> targets;
  for (const std::string& t : args.targets) targets.push_back(canonical_target(t));

  // One request per kernel (a manifest's, or the keys or IR given), each asked for every target: the column
  // is loaded once for all of them, however many pairs (a build gate's whole matrix in one process).
  std::vector<CheckResult> results;
  std::vector<const KernelManifest*> result_manifest;
  auto ask = [&](CheckRequest& req, const KernelManifest* m) {
    std::vector<std::string> drift;
    if (m && uses) drift = manifest_drift(uses->target_intrinsics, m->keys, column, checker.catalog());
    for (const std::string& target : targets) {
      req.target = target;
      results.push_back(checker.check(req, column));
      // Drift is a refusal of the build on every target: the verdict, the message and the JSON say so.
      if (m && uses) results.back().apply_drift(drift);
      result_manifest.push_back(m);
    }
  };
  // A HIP source, per target: clang's refusals, else the IR clang made for the target. Without the flavor's clang,
  // the builtins the source names are asked of the committed front-end axis, and the answer says so.
  auto ask_hip = [&](const CheckRequest& base) {
    const std::string clang = clang_for_flavor(flavor, args.compiler);
    std::vector<std::string> named;
    if (clang.empty()) named = builtins_named(read_file(args.ir));
    for (const std::string& target : targets) {
      CheckRequest req = base;
      req.target = target;
      if (!clang.empty()) {
        HipCompile compiled = compile_hip(clang, args.ir, target, args.clang_args);
        if (!compiled.refused.empty()) req.refused_builtins = std::move(compiled.refused);
        else add_ir_uses(req, reader->read(compiled.ir, args.ir + " (device IR for " + target + ")"));
      } else {
        req.keys = named;
        req.through_frontend = true;
        req.notes.push_back("clang-" + flavor.substr(4) + " is not installed: the builtins the source names are "
                            "answered from " + flavor + "'s committed front-end axis and the back end's cells, "
                            "not from the IR clang would make");
      }
      results.push_back(checker.check(req, column));
      result_manifest.push_back(nullptr);
    }
  };
  if (hip) ask_hip(request);
  else if (manifests.empty()) ask(request, nullptr);
  for (const KernelManifest& m : manifests) {
    CheckRequest per_kernel = request;
    // A manifest's kernel is HIP: its keys are called through clang, whose refusal decides first.
    per_kernel.through_frontend = true;
    if (!uses) per_kernel.keys = m.keys;
    if (args.name.empty()) per_kernel.subject = m.kernel;
    ask(per_kernel, &m);
  }
  // Over several targets or kernels the most severe verdict decides.
  Verdict worst = Verdict::kCleared;
  for (const CheckResult& r : results)
    if (r.verdict == Verdict::kRefused || (r.verdict == Verdict::kUnvalidated && worst == Verdict::kCleared)) worst = r.verdict;
  int code = exit_for(worst);

  std::vector<nlohmann::ordered_json> answers;
  for (size_t i = 0; i < results.size(); ++i) {
    answers.push_back(results[i].to_json());
    if (result_manifest[i]) answers.back()["manifest"] = result_manifest[i]->path;
  }
  if (!args.json_dir.empty()) write_json_dir(args.json_dir, answers, results, result_manifest, args.targets);
  if (args.json) {
    nlohmann::ordered_json out;
    if (results.size() == 1) {
      out = answers.front();
    } else {
      out = nlohmann::ordered_json::array();
      for (auto& a : answers) out.push_back(std::move(a));
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (size_t i = 0; i < results.size(); ++i) {
      const CheckResult& r = results[i];
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
      for (const std::string& n : r.notes) std::printf("note: %s\n", n.c_str());
      for (const std::string& d : r.drift)
        std::printf("drift: %s: %s (manifest %s)\n", r.subject.c_str(), d.c_str(), result_manifest[i]->path.c_str());
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
      ->allow_extra_args(false);  // resolved per request: --json-dir keys answers by the spelling given
  cmd->add_option("--flavor", args->flavor, "the flavor of the compiler that will build (llvm22)");
  cmd->add_option("--compiler", args->compiler, "derive the flavor from this compiler's --version (its LLVM major)");
  cmd->add_option("--keys", args->keys,
                  "catalog keys, llvm.amdgcn.* intrinsics or __builtin_amdgcn_* builtins: KEY,KEY... or @FILE (one a line)");
  cmd->add_option("--ir,ir", args->ir,
                  "the kernel: LLVM IR (.ll text or .bc bitcode), or HIP source (.hip .cu .cpp .cc .cxx), which the "
                  "flavor's clang (--compiler, else clang-<major>) compiles for each target before its IR is checked");
  cmd->add_option("--clang-arg", args->clang_args, "one more argument for clang compiling a HIP source (-I DIR, -DNAME)")
      ->allow_extra_args(false);
  cmd->add_option("--manifest", args->manifests,
                  "a kernel manifest (JSON), or @LIST (one manifest a line); repeatable: every kernel on every target, "
                  "in one process. With an IR file (one manifest), also fails when the IR uses an intrinsic it does "
                  "not list")
      ->allow_extra_args(false);
  cmd->add_option("--json-dir", args->json_dir,
                  "also write each kernel's answers as DIR/<kernel>.json, keyed by target (for a build gate's steps)");
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
