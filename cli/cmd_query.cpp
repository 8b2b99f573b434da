// cli/cmd_query.cpp — `archdb query KEY`: a key's cells, targets by flavors, with status, what it lowered to
// and the evidence; and `archdb runs`: the record of runs.
#include <cstdio>
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "cli/census_view.h"
#include "cli/commands.h"
#include "cli/key_cells.h"
#include "cli/table.h"
#include "db/census.h"
#include "support/text.h"
#include "support/error.h"

namespace archdb::cli {
namespace {

struct QueryArgs {
  std::string key;
  std::vector<std::string> flavors;
  std::vector<std::string> targets;
  bool json = false;
};

std::string detail(const Cell& c) {
  if (c.status != Status::kOk) return c.evidence;
  std::string s;
  for (const auto& m : c.lowered_to) s += (s.empty() ? "" : " ") + m;
  if (s.empty() && !c.note.empty()) s = "(" + c.note + ")";
  if (c.posed) s += "  [posed: " + c.posed->describe() + "]";
  if (!c.mc_check.empty()) s += "  [mc_check: " + c.mc_check + "]";
  return s;
}

// `query KEY --target P` for processors P that the key's columns do not hold: the censuses answer the instantiation
// the key poses there (as the census poses it), said first; P must be a census processor, and is asked apart from
// the key's own targets.
int query_census_processors(const Context& ctx, const Store& store, const KeyCells& all, const std::string& asked,
                            const QueryArgs& args, const std::vector<std::string>& in_columns,
                            const std::vector<std::string>& others) {
  std::vector<const Cell*> mine;
  for (const auto& [flavor, cells] : all.cells)
    for (const auto& [target, cell] : cells) mine.push_back(&cell);
  std::optional<std::string> inst = plain_instantiation(mine);
  std::set<std::string> processors;
  if (inst)
    for (const std::string& f : census_flavors(store))
      for (const Cell& c : find_census(store, f, *inst).cells) processors.insert(c.target);
  for (const auto& t : others)
    if (!processors.count(t))
      throw usage_error("unknown target '" + t + "' for key '" + args.key + "' (not a target of its columns" +
                        (inst ? ", nor a processor of a census measuring " + *inst : "") + ")");
  if (!in_columns.empty())
    throw usage_error("ask " + join(others, ", ") + " (answered by the censuses) apart from " + join(in_columns, ", ") +
                      " (targets of " + args.key + "'s columns)");
  const std::string how = join(others, ", ") + " is not a target of " + args.key + "'s columns: the censuses answer " +
                          *inst + ", the intrinsic it poses, as the census poses it";
  if (!query_census(ctx, store, *inst, args.flavors, others, args.json, {asked, how}))
    throw usage_error("no census measures " + *inst);
  return kExitOk;
}

int query(const Context& ctx, const QueryArgs& asked) {
  auto store = ctx.open_store();
  QueryArgs args = asked;
  // Any spelling of a key, its builtin or the intrinsic it poses exactly is that key; another intrinsic (or a
  // builtin's) is answered by the censuses, marked as such.
  NameAsked name = read_name(ctx, *store, args.key, args.json);
  if (name.census && query_census(ctx, *store, *name.census, args.flavors, args.targets, args.json)) return kExitOk;
  args.key = name.key;
  const std::string resolved = name.census ? "" : name.how;  // how another spelling led to the key
  KeyCells kc = gather_key_cells(ctx, *store, args.key, args.flavors, {});
  if (!args.targets.empty()) {
    // A processor the key's columns do not hold but a census does: the census answers the key's instantiation.
    std::vector<std::string> in_columns, others;
    for (const auto& t : args.targets)
      (std::find(kc.targets.begin(), kc.targets.end(), t) != kc.targets.end() ? in_columns : others).push_back(t);
    if (!others.empty()) return query_census_processors(ctx, *store, kc, asked.key, args, in_columns, others);
    kc.targets = args.targets;  // the targets asked, in the order asked
  }
  const auto& flavors = kc.flavors;
  const auto& order = kc.targets;

  if (args.json) {
    nlohmann::ordered_json out;
    out["key"] = args.key;
    if (!resolved.empty()) out["resolved"] = {{"asked", asked.key}, {"how", resolved}};
    nlohmann::ordered_json fl = nlohmann::ordered_json::object();
    for (const auto& f : flavors) {
      nlohmann::ordered_json col;
      col["origin"] = std::string(origin_name(f.origin));
      nlohmann::ordered_json ts = nlohmann::ordered_json::object();
      for (const auto& t : order)
        if (const Cell* c = kc.find(f.name, t)) ts[t] = cell_to_json(*c);
      col["cells"] = ts;
      fl[f.name] = col;
    }
    out["flavors"] = fl;
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }

  std::vector<std::string> header = {"target"};
  for (const auto& f : flavors) header.push_back(f.name + (f.origin == Origin::kImported ? " (imported)" : ""));
  Table table(header);
  for (const auto& t : order) {
    std::vector<std::string> row = {t};
    for (const auto& f : flavors) {
      const Cell* c = kc.find(f.name, t);
      row.push_back(c ? std::string(status_name(c->status)) : "-");
    }
    table.add(row);
  }
  if (!resolved.empty()) std::printf("%s: %s\n", asked.key.c_str(), resolved.c_str());
  std::printf("%s\n\n%s\n", args.key.c_str(), table.render().c_str());
  for (const auto& f : flavors) {
    auto column = kc.cells.find(f.name);
    if (column == kc.cells.end() || column->second.empty()) continue;
    std::printf("%s%s: %s\n", f.name.c_str(), f.origin == Origin::kImported ? " (imported, not measured here)" : "",
                column->second.begin()->second.intrinsic.c_str());
    Table details({"  target", "status", "lowered to / evidence"});
    for (const auto& t : order)
      if (const Cell* c = kc.find(f.name, t)) details.add({"  " + t, std::string(status_name(c->status)), detail(*c)});
    std::printf("%s\n", details.render().c_str());
  }
  return kExitOk;
}

}  // namespace

void add_query(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* sub = app.add_subcommand("query", "Show a key's cells: targets by flavors, with status, lowered_to and evidence");
  sub->add_option("key", args->key, "the decl key, e.g. mfma.f32.4x4x4bf16.1k")->required();
  sub->add_option("--flavor", args->flavors, "only these flavors (repeatable)");
  sub->add_option("--target", args->targets, "only these targets (repeatable; LLVM's aliases accepted)")->transform(processor_name());
  sub->add_flag("--json", args->json, "print JSON");
  sub->callback([&context, &exit_code, args] { exit_code = query(context, *args); });
}

void add_runs(CLI::App& app, Context& context, int& exit_code) {
  auto limit = std::make_shared<int>(20);
  CLI::App* sub = app.add_subcommand("runs", "List the recorded runs, newest first");
  sub->add_option("--limit", *limit, "how many")->default_val(20);
  sub->callback([&context, &exit_code, limit] {
    auto store = context.open_store();
    Table table({"id", "flavor", "kind", "started", "ended", "outcome", "message"});
    for (const auto& r : store->runs(*limit))
      table.add({std::to_string(r.id), r.flavor, r.kind, r.started_at, r.ended_at, r.outcome, r.message});
    std::fputs(table.render().c_str(), stdout);
    exit_code = kExitOk;
  });
}

}  // namespace archdb::cli
