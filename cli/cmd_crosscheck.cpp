// cli/cmd_crosscheck.cpp — `archdb crosscheck`: a committed census held against facts derived from LLVM's own
// AMDGPU CodeGen tests (db/crosscheck.h): the agreement figure, then every fact the census answers otherwise.
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/table.h"
#include "db/census.h"
#include "db/crosscheck.h"
#include "probe/census.h"
#include "probe/probe.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb::cli {
namespace {

struct CrosscheckArgs {
  std::string flavor;
  std::string facts;
  bool json = false;
  bool all = false;
  bool measure = false;
  double min_agreement = -1;
};

// Declarations (fact intrinsic -> declare line) measured by the probe on `targets` (every posing, forked workers,
// as the census measures); a declaration this LLVM cannot read (a named type the test defines elsewhere) is left out.
MeasuredFacts measure_declarations(std::map<std::string, std::string> declaration_of, const std::set<std::string>& targets,
                                   const std::string& flavor) {
  std::vector<DeclSpec> specs;
  for (const auto& [intrinsic, declaration] : declaration_of) {
    DeclSpec spec;
    spec.kind = DeclSpec::Kind::kDeclare;
    spec.name = intrinsic;
    spec.declare_text = declaration;
    specs.push_back(spec);
  }
  ProbeOptions resolving;
  resolving.flavor = flavor;
  std::vector<ResolveOutcome> outcomes = resolve_declarations(specs, resolving);
  for (size_t i = 0; i < specs.size(); ++i)
    if (outcomes[i].resolution.kind != Resolution::Kind::kResolved) declaration_of.erase(specs[i].name);
  Catalog catalog;
  catalog.path = "(facts)";
  std::map<std::string, std::string> fact_of_key;
  for (const auto& [intrinsic, declaration] : declaration_of) {
    CatalogEntry e;
    e.key = "fact" + std::to_string(catalog.entries.size());
    e.spec.kind = DeclSpec::Kind::kDeclare;
    e.spec.name = intrinsic;
    e.spec.declare_text = declaration;
    fact_of_key[e.key] = intrinsic;
    catalog.entries.push_back(std::move(e));
  }
  MeasuredFacts out;
  if (catalog.entries.empty() || targets.empty()) return out;
  std::vector<const CatalogEntry*> entries;
  for (const auto& e : catalog.entries) entries.push_back(&e);
  CensusOptions census_options;
  census_options.flavor = flavor;
  ProbeOptions options = census_probe_options(census_options);
  options.targets.assign(targets.begin(), targets.end());
  ProbeResult result = run_probe(catalog, entries, options);
  for (const Cell& c : result.column.cells)
    if (c.status != Status::kProbeError) out[fact_of_key[c.key]][c.target] = c;
  std::fprintf(stderr, "measured %zu declarations of the facts on %zu targets in %.1f s\n", catalog.entries.size(),
               targets.size(), result.stats.seconds);
  return out;
}

// The facts' own declarations measured where the census does not answer them exactly: on the plain processors,
// those whose instantiation the census did not measure; on a target with the test's features, every one.
MeasuredFacts measure_fact_declarations(const Census& census, const std::vector<TestFact>& facts, const std::string& flavor) {
  initialize_amdgpu();
  if (linked_toolchain().flavor() != flavor)
    throw Error(kExitProbeFailed, "--measure: this archdb links LLVM " + linked_toolchain().llvm_version + " (flavor " +
                                      linked_toolchain().flavor() + "), not " + flavor);
  std::map<std::string, std::string> plain, featured;  // fact intrinsic -> its declaration
  std::set<std::string> plain_targets, featured_targets;
  const auto& processors = census.provenance.processors;
  for (const TestFact& f : facts) {
    if (f.declaration == "-" || !std::binary_search(processors.begin(), processors.end(), f.processor)) continue;
    if (f.target != f.processor) {
      featured.emplace(f.intrinsic, f.declaration);
      featured_targets.insert(f.target);
    } else if (!census.instantiation(f.intrinsic)) {
      plain.emplace(f.intrinsic, f.declaration);
      plain_targets.insert(f.target);
    }
  }
  MeasuredFacts out = measure_declarations(plain, plain_targets, flavor);
  for (auto& [intrinsic, cells] : measure_declarations(featured, featured_targets, flavor))
    for (auto& [target, cell] : cells) out[intrinsic][target] = std::move(cell);
  return out;
}

// Each fact's target: its processor with what its -mattr changes there, as this build's LLVM computes it. A
// feature this LLVM does not know leaves the plain processor (llc ignores it: it changes nothing this LLVM
// builds); a processor it does not know keeps the features as spelled (the fact counts as an unknown processor).
void resolve_fact_targets(std::vector<TestFact>& facts) {
  initialize_amdgpu();
  std::map<std::string, std::string> resolved;
  for (TestFact& f : facts) {
    if (f.mattr == "-") continue;
    std::string spelled = f.processor + ":" + f.mattr;
    auto it = resolved.find(spelled);
    if (it == resolved.end()) {
      std::string target = f.processor;
      try {
        target = canonical_target(spelled);
      } catch (const Error&) {
      }
      it = resolved.emplace(spelled, target).first;
    }
    f.target = it->second;
  }
}

std::string flags_of(const TestFact& f) {
  return f.opt + " " + f.isel + " " + f.triple + (f.mattr == "-" ? "" : " " + f.mattr);
}

int crosscheck_command(const Context& ctx, const CrosscheckArgs& args) {
  if (!is_valid_flavor(args.flavor)) throw usage_error("invalid flavor '" + args.flavor + "' (expected e.g. llvm22)");
  std::optional<Census> census = read_census_file(ctx.data, args.flavor);
  if (!census) throw usage_error("no committed census of " + args.flavor + " (data/" + args.flavor + "/census.txt)");
  // The fixture sits in the checkout beside data/ (an installed archdb has none: --facts names one).
  std::string facts_path =
      args.facts.empty() ? (std::filesystem::path(ctx.data).parent_path() / "tests/fixtures/llvm_test_facts.tsv").string()
                         : args.facts;
  std::vector<TestFact> facts = parse_test_facts(read_file(facts_path), facts_path);
  resolve_fact_targets(facts);
  MeasuredFacts measured;
  if (args.measure) measured = measure_fact_declarations(*census, facts, args.flavor);
  CrossCheck check = cross_check(*census, facts, args.measure ? &measured : nullptr);
  auto count = [&](FactOutcome o) {
    auto it = check.counts.find(o);
    return it == check.counts.end() ? 0 : it->second;
  };
  if (args.json) {
    nlohmann::ordered_json j;
    j["flavor"] = args.flavor;
    j["facts"] = facts.size();
    j["compared"] = check.compared();
    j["agreement"] = check.agreement();
    nlohmann::ordered_json counts;
    for (auto o : {FactOutcome::kAgrees, FactOutcome::kFalseOk, FactOutcome::kFalseAbsent, FactOutcome::kNoAnswer,
                   FactOutcome::kUnknownProcessor, FactOutcome::kProcessorDefect, FactOutcome::kNotInCensus,
                   FactOutcome::kOtherFeatures})
      counts[std::string(fact_outcome_name(o))] = count(o);
    j["counts"] = counts;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& c : check.comparisons) {
      if (!args.all && c.outcome == FactOutcome::kAgrees) continue;
      nlohmann::ordered_json r = {{"intrinsic", c.intrinsic}, {"processor", c.facts.front()->processor}, {"target", c.target},
                                  {"expect", c.lowers ? "lowers" : "refused"},
                                  {"outcome", std::string(fact_outcome_name(c.outcome))},
                                  {"census", c.census_key}, {"exact", c.exact}, {"measured", c.measured},
                                  {"census_answer", c.census_answer}};
      nlohmann::ordered_json sources = nlohmann::ordered_json::array();
      for (const TestFact* f : c.facts) sources.push_back({{"flags", flags_of(*f)}, {"source", f->source}, {"detail", f->detail}});
      r["tests"] = sources;
      rows.push_back(r);
    }
    j["comparisons"] = rows;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s census (LLVM %s) against %zu facts from LLVM's AMDGPU tests (%s)\n", args.flavor.c_str(),
                census->provenance.llvm_version.c_str(), facts.size(), facts_path.c_str());
    std::printf("  %d (intrinsic, target, expectation) compared: %d agree (%.1f%%), %d false arch_absent, "
                "%d false ok, %d no answer\n",
                check.compared(), count(FactOutcome::kAgrees), 100.0 * check.agreement(),
                count(FactOutcome::kFalseAbsent), count(FactOutcome::kFalseOk), count(FactOutcome::kNoAnswer));
    std::printf("  not counted: %d on processors LLVM %s does not know, %d on processors whose every kernel its "
                "assembler rejects (the census's processor notes), %d of intrinsics the census does not have, "
                "%d built with features the census does not pose%s\n",
                count(FactOutcome::kUnknownProcessor), census->provenance.llvm_version.c_str(),
                count(FactOutcome::kProcessorDefect),
                count(FactOutcome::kNotInCensus), count(FactOutcome::kOtherFeatures),
                args.measure ? " (their declarations unknown or unreadable)" : " (--measure measures them)");
    Table table({"outcome", "intrinsic", "target", "census", "tests"});
    bool any = false;
    for (const auto& c : check.comparisons) {
      if (!args.all && c.outcome == FactOutcome::kAgrees) continue;
      std::vector<std::string> tests;
      for (const TestFact* f : c.facts) tests.push_back(flags_of(*f) + " " + f->source);
      table.add({std::string(fact_outcome_name(c.outcome)), c.intrinsic, c.target,
                 c.census_answer.empty() ? "-" : (c.exact ? "" : "[" + c.census_key + "] ") + c.census_answer,
                 join(tests, "; ")});
      any = true;
    }
    if (any) std::printf("\n%s", table.render().c_str());
  }
  if (args.min_agreement >= 0 && check.agreement() * 100.0 < args.min_agreement) {
    std::fprintf(stderr, "archdb: agreement %.1f%% is below --min-agreement %.1f%%\n", 100.0 * check.agreement(),
                 args.min_agreement);
    return kExitDifferent;
  }
  return kExitOk;
}

}  // namespace

void add_crosscheck(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<CrosscheckArgs>();
  auto* sub = app.add_subcommand("crosscheck", "hold a committed census against facts from LLVM's own AMDGPU tests");
  sub->add_option("--flavor", args->flavor, "the census's flavor")->required();
  sub->add_option("--facts", args->facts, "the facts file (default: tests/fixtures/llvm_test_facts.tsv)");
  sub->add_flag("--json", args->json, "JSON instead of text");
  sub->add_flag("--all", args->all, "list the agreeing facts too");
  sub->add_flag("--measure", args->measure,
                "measure each fact's own declaration the census did not measure (this build must link the flavor)");
  sub->add_option("--min-agreement", args->min_agreement, "exit 1 when the agreement (percent) is below this");
  sub->callback([&context, &exit_code, args] { exit_code = crosscheck_command(context, *args); });
}

}  // namespace archdb::cli
