// cli/cmd_query.cpp — `archdb query KEY`: a key's cells, targets by flavors, with status, what it lowered to
// and the evidence; and `archdb runs`: the record of runs.
#include <cstdio>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/table.h"
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
  if (c.imm) s += "  [imm " + std::to_string(*c.imm) + "]";
  if (!c.mc_check.empty()) s += "  [mc_check: " + c.mc_check + "]";
  return s;
}

int query(const Context& ctx, const QueryArgs& args) {
  auto store = ctx.open_store();
  std::vector<FlavorRow> rows = store->flavors();
  std::set<std::string> wanted(args.flavors.begin(), args.flavors.end());
  for (const auto& f : args.flavors) {
    bool found = false;
    for (const auto& r : rows) found |= r.name == f;
    if (!found) throw usage_error("unknown flavor '" + f + "' (not in the database; see `archdb coverage`)");
  }
  std::vector<FlavorRow> flavors;
  for (const auto& r : rows)
    if (wanted.empty() || wanted.count(r.name)) flavors.push_back(r);

  std::map<std::string, std::map<std::string, Cell>> cells;  // flavor -> target -> cell
  std::set<std::string> targets_seen;
  for (const auto& f : flavors)
    for (auto& c : store->cells_for_key(f.name, args.key)) {
      targets_seen.insert(c.target);
      cells[f.name][c.target] = c;
    }
  if (targets_seen.empty()) {
    Catalog catalog = ctx.load_catalog();
    std::string near;
    for (const auto& k : catalog.keys())
      if (k.find(args.key) != std::string::npos) near += (near.empty() ? "" : ", ") + k;
    if (!catalog.find(args.key))
      throw usage_error("unknown key '" + args.key + "'" + (near.empty() ? "" : " (did you mean: " + near + ")"));
    throw usage_error("key '" + args.key + "' has no cells in the database yet (run `archdb regen`)");
  }
  // Targets in the wired order, then any other a column holds.
  std::vector<std::string> order;
  for (const auto& t : ctx.load_targets().names)
    if (targets_seen.count(t)) order.push_back(t);
  for (const auto& t : targets_seen)
    if (std::find(order.begin(), order.end(), t) == order.end()) order.push_back(t);
  for (const auto& t : args.targets)
    if (!targets_seen.count(t)) throw usage_error("unknown target '" + t + "' for key '" + args.key + "'");
  if (!args.targets.empty()) order = args.targets;

  if (args.json) {
    nlohmann::ordered_json out;
    out["key"] = args.key;
    nlohmann::ordered_json fl = nlohmann::ordered_json::object();
    for (const auto& f : flavors) {
      nlohmann::ordered_json col;
      col["origin"] = std::string(origin_name(f.origin));
      nlohmann::ordered_json ts = nlohmann::ordered_json::object();
      for (const auto& t : order) {
        auto it = cells[f.name].find(t);
        if (it != cells[f.name].end()) ts[t] = cell_to_json(it->second);
      }
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
      auto it = cells[f.name].find(t);
      row.push_back(it == cells[f.name].end() ? "-" : std::string(status_name(it->second.status)));
    }
    table.add(row);
  }
  std::printf("%s\n\n%s\n", args.key.c_str(), table.render().c_str());
  for (const auto& f : flavors) {
    if (cells[f.name].empty()) continue;
    std::printf("%s%s: %s\n", f.name.c_str(), f.origin == Origin::kImported ? " (imported, not measured here)" : "",
                cells[f.name].begin()->second.intrinsic.c_str());
    Table details({"  target", "status", "lowered to / evidence"});
    for (const auto& t : order) {
      auto it = cells[f.name].find(t);
      if (it == cells[f.name].end()) continue;
      details.add({"  " + t, std::string(status_name(it->second.status)), detail(it->second)});
    }
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
  sub->add_option("--target", args->targets, "only these targets (repeatable)");
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
