// cli/cmd_crosscheck.cpp — `archdb crosscheck`: a committed census held against facts derived from LLVM's own
// AMDGPU CodeGen tests (db/crosscheck.h): the agreement figure, then every fact the census answers otherwise.
#include <cstdio>
#include <filesystem>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/table.h"
#include "db/census.h"
#include "db/crosscheck.h"
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
  double min_agreement = -1;
};

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
  CrossCheck check = cross_check(*census, facts);
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
                   FactOutcome::kUnknownProcessor, FactOutcome::kNotInCensus})
      counts[std::string(fact_outcome_name(o))] = count(o);
    j["counts"] = counts;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& c : check.comparisons) {
      if (!args.all && c.outcome == FactOutcome::kAgrees) continue;
      nlohmann::ordered_json r = {{"intrinsic", c.intrinsic}, {"processor", c.processor},
                                  {"expect", c.lowers ? "lowers" : "refused"},
                                  {"outcome", std::string(fact_outcome_name(c.outcome))},
                                  {"census", c.census_key}, {"exact", c.exact}, {"census_answer", c.census_answer}};
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
    std::printf("  %d (intrinsic, processor, expectation) compared: %d agree (%.1f%%), %d false arch_absent, "
                "%d false ok, %d no answer\n",
                check.compared(), count(FactOutcome::kAgrees), 100.0 * check.agreement(),
                count(FactOutcome::kFalseAbsent), count(FactOutcome::kFalseOk), count(FactOutcome::kNoAnswer));
    std::printf("  not counted: %d on processors LLVM %s does not know, %d of intrinsics the census does not have\n",
                count(FactOutcome::kUnknownProcessor), census->provenance.llvm_version.c_str(),
                count(FactOutcome::kNotInCensus));
    Table table({"outcome", "intrinsic", "processor", "census", "tests"});
    bool any = false;
    for (const auto& c : check.comparisons) {
      if (!args.all && c.outcome == FactOutcome::kAgrees) continue;
      std::vector<std::string> tests;
      for (const TestFact* f : c.facts) tests.push_back(flags_of(*f) + " " + f->source);
      table.add({std::string(fact_outcome_name(c.outcome)), c.intrinsic, c.processor,
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
  sub->add_option("--min-agreement", args->min_agreement, "exit 1 when the agreement (percent) is below this");
  sub->callback([&context, &exit_code, args] { exit_code = crosscheck_command(context, *args); });
}

}  // namespace archdb::cli
