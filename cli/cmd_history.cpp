// cli/cmd_history.cpp — reading columns across flavors: `archdb history KEY`, `archdb diff FROM TO`, and
// `archdb compare --flavor F --with FILE` (agreement with a peer's rocke-v1 column).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/key_cells.h"
#include "cli/table.h"
#include "db/census.h"
#include "db/history.h"
#include "db/rocke.h"
#include "schema/targets.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb::cli {
namespace {


std::string brief(const Cell& c) {
  if (c.status == Status::kOk) {
    std::string s;
    for (const auto& m : c.lowered_to) s += (s.empty() ? "" : " ") + m;
    if (auto imm = c.posed ? c.posed->alike_immediate() : std::nullopt; imm && *imm != 0)
      s += " [imm " + std::to_string(*imm) + "]";
    return "ok" + (s.empty() ? std::string() : " (" + s + ")");
  }
  return std::string(status_name(c.status)) + " (" + c.evidence + ")";
}

struct HistoryArgs {
  std::string key;
  std::vector<std::string> targets;
  bool json = false;
};

using RowFor = HistoryRowFor;

std::string history_table(const std::string& first, const std::vector<std::string>& labels,
                          const std::vector<std::string>& targets, const RowFor& row_for) {
  std::vector<std::string> header = {first};
  header.insert(header.end(), labels.begin(), labels.end());
  header.push_back("summary");
  Table table(header);
  for (const auto& t : targets) {
    std::vector<std::string> line = {t};
    auto row = row_for(t);
    for (const auto& fc : row) line.push_back(fc.cell ? std::string(status_name(fc.cell->status)) : "-");
    line.push_back(history_summary(row));
    table.add(line);
  }
  return table.render();
}

// An intrinsic outside the catalog, from the censuses: per processor, its answer in each flavor over every
// instantiation that flavor's census measured of it (intrinsic_answer). False when no census has it.
bool intrinsic_history(const Store& store, const HistoryArgs& args) {
  std::vector<CensusOfIntrinsic> censuses;
  for (const std::string& f : census_flavors(store)) {
    CensusMatch m = find_census(store, f, args.key);
    censuses.push_back({f, std::move(m.instantiations), std::move(m.cells)});
  }
  const IntrinsicHistory h = archdb::intrinsic_history(args.key, censuses, args.targets);
  if (h.empty()) return false;
  if (args.json) {
    std::printf("%s\n", h.to_json().dump(2).c_str());
    return true;
  }
  std::vector<std::string> labels;
  for (const std::string& f : h.flavors) labels.push_back(f + " (census)");
  std::printf("%s (census: not a catalog key; on each processor, ok where any instantiation lowers, refused where "
              "every one is)\n\n%s", h.name.c_str(),
              history_table("processor", labels, h.processors, [&h](const std::string& t) { return h.row(t); }).c_str());
  for (const std::string& f : h.flavors) std::printf("\n%s: %s\n", f.c_str(), join(h.instantiations.at(f), ", ").c_str());
  return true;
}

int history(const Context& ctx, const HistoryArgs& asked) {
  auto store = ctx.open_store();
  HistoryArgs args = asked;
  NameAsked name = read_name(ctx, *store, args.key, args.json);  // query's rule
  if (name.census) {
    HistoryArgs census = args;
    census.key = *name.census;
    if (intrinsic_history(*store, census)) return kExitOk;
  }
  args.key = name.key;
  const std::string resolved = name.census ? "" : name.how;  // how another spelling led to the key
  KeyCells kc = gather_key_cells(ctx, *store, args.key, {}, args.targets);
  const auto& flavors = kc.flavors;
  const auto& order = kc.targets;

  auto row_for = [&](const std::string& target) {
    std::vector<FlavorCell> row;
    for (const auto& f : flavors) {
      FlavorCell fc;
      fc.flavor = f.name;
      fc.imported = f.origin == Origin::kImported;
      fc.cell = kc.find(f.name, target);
      row.push_back(fc);
    }
    return row;
  };

  if (args.json) {
    nlohmann::ordered_json out;
    out["key"] = args.key;
    if (!resolved.empty()) out["resolved"] = {{"asked", asked.key}, {"how", resolved}};
    nlohmann::ordered_json fl = nlohmann::ordered_json::array();
    for (const auto& f : flavors) fl.push_back({{"name", f.name}, {"origin", std::string(origin_name(f.origin))}});
    out["flavors"] = fl;
    out["targets"] = history_targets_json(order, row_for, false);
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::vector<std::string> labels;
  for (const auto& f : flavors) labels.push_back(f.name + (f.origin == Origin::kImported ? " (imported)" : ""));
  if (!resolved.empty()) std::printf("%s: %s\n", asked.key.c_str(), resolved.c_str());
  std::printf("%s\n\n%s", args.key.c_str(), history_table("target", labels, order, row_for).c_str());
  for (const auto& f : flavors)
    if (f.origin == Origin::kDescriptor) std::printf("\n%s: not measured on this host (see data/%s/column.json)\n", f.name.c_str(), f.name.c_str());
  return kExitOk;
}

struct DiffArgs {
  std::string from, to;
  std::vector<std::string> targets, groups;
  bool json = false;
};

int diff(const Context& ctx, const DiffArgs& args) {
  auto store = ctx.open_store();
  for (const auto& f : {args.from, args.to}) {
    auto row = store->flavor(f);
    if (!row) throw usage_error("unknown flavor '" + f + "' (not in the database)");
    if (row->origin == Origin::kDescriptor)
      throw usage_error("'" + f + "' is not measured: data/" + f + "/ is a descriptor, with no cells to compare");
  }
  for (const std::string& g : args.groups)
    if (!is_change_group(g)) throw usage_error(unknown_change_group(g));
  std::map<std::pair<std::string, std::string>, Cell> before;
  for (auto& c : store->cells(args.from)) before[{c.key, c.target}] = c;
  std::map<std::string, std::vector<std::pair<Cell, Cell>>> groups;
  size_t shared = 0;
  for (auto& c : store->cells(args.to)) {
    if (!diff_keeps_target(args.targets, c.target)) continue;
    auto it = before.find({c.key, c.target});
    if (it == before.end()) continue;
    ++shared;
    std::string g = change_group(it->second, c);
    if (g.empty() || (!args.groups.empty() && std::find(args.groups.begin(), args.groups.end(), g) == args.groups.end()))
      continue;
    groups[g].push_back({it->second, c});
  }
  if (!args.targets.empty() && shared == 0)
    throw usage_error(args.from + " and " + args.to + " share no cell on " + join(args.targets, ", "));
  if (args.json) {
    nlohmann::ordered_json out;
    out["from"] = args.from;
    out["to"] = args.to;
    out["shared_cells"] = shared;
    nlohmann::ordered_json gs = nlohmann::ordered_json::object();
    for (const auto& name : change_groups()) {
      if (!groups.count(name)) continue;
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& [a, b] : groups[name])
        list.push_back({{"key", a.key}, {"target", a.target}, {"from", cell_to_json(a)}, {"to", cell_to_json(b)}});
      gs[name] = list;
    }
    out["groups"] = gs;
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  size_t changed = 0;
  for (const auto& [name, list] : groups) changed += list.size();
  std::printf("%s -> %s: %zu of %zu shared cells changed\n", args.from.c_str(), args.to.c_str(), changed, shared);
  for (const auto& name : change_groups()) {
    if (!groups.count(name)) continue;
    // Churn (only the waits, nops and moves around a call changed) is counted, and listed only when asked for.
    if (name == "lowering churn" && args.groups.empty()) {
      std::printf("\n%s (%zu): only waits, nops and moves changed; --group '%s' lists them\n", name.c_str(),
                  groups[name].size(), name.c_str());
      continue;
    }
    std::printf("\n%s (%zu)\n", name.c_str(), groups[name].size());
    for (const auto& [a, b] : groups[name])
      std::printf("  %s/%s: %s -> %s\n", a.key.c_str(), a.target.c_str(), brief(a).c_str(), brief(b).c_str());
  }
  return kExitOk;
}

struct CompareArgs {
  std::string flavor, with;
};

int compare(const Context& ctx, const CompareArgs& args) {
  auto store = ctx.open_store();
  auto row = store->flavor(args.flavor);
  if (!row || row->origin != Origin::kMeasured) throw usage_error("'" + args.flavor + "' is not a measured column");
  RockeColumn theirs = read_rocke(ctx, read_file(args.with), args.with);
  if (theirs.flavor != args.flavor)
    throw usage_error(args.with + " is a column of " + theirs.flavor + ", not " + args.flavor +
                      " (compare a file with the measured column of its own flavor)");
  std::map<std::pair<std::string, std::string>, Cell> ours;
  for (auto& c : store->cells(args.flavor)) ours[{c.key, c.target}] = c;
  size_t shared = 0, agree = 0;
  std::map<std::string, std::vector<std::pair<Cell, Cell>>> disagreements;  // "ours -> theirs" -> cells
  for (const auto& t : theirs.cells) {
    auto it = ours.find({t.key, t.target});
    if (it == ours.end()) continue;
    ++shared;
    if (it->second.status == t.status) {
      ++agree;
      continue;
    }
    std::string kind = std::string(status_name(it->second.status)) + " here, " + std::string(status_name(t.status)) + " there";
    disagreements[kind].push_back({it->second, t});
  }
  if (shared == 0)
    throw usage_error(args.with + " and " + args.flavor + " share no (key, target) cell: nothing to compare");
  std::printf("%s (measured here) vs %s (%s, %s)\n", args.flavor.c_str(), args.with.c_str(),
              theirs.toolchain.value("clang", std::string("?")).c_str(), theirs.flavor.c_str());
  std::printf("shared cells: %zu; same status: %zu (%.1f%%); different: %zu\n", shared, agree,
              shared ? 100.0 * static_cast<double>(agree) / static_cast<double>(shared) : 0.0, shared - agree);
  for (const auto& [kind, list] : disagreements) {
    std::printf("\n%s (%zu)\n", kind.c_str(), list.size());
    for (const auto& [a, b] : list)
      std::printf("  %s/%s [%s | %s]: here %s; there %s\n", a.key.c_str(), a.target.c_str(), a.intrinsic.c_str(),
                  b.intrinsic.c_str(), brief(a).c_str(), brief(b).c_str());
  }
  return shared == agree ? kExitOk : kExitDifferent;
}

}  // namespace

void add_history(CLI::App& app, Context& context, int& exit_code) {
  auto h = std::make_shared<HistoryArgs>();
  CLI::App* hist = app.add_subcommand("history", "A key across flavors: per target, the status in each column and a summary");
  hist->add_option("key", h->key, "the decl key (or an llvm.amdgcn.* intrinsic outside the catalog: its census answers)")->required();
  hist->add_option("--target", h->targets, "only these targets (repeatable; LLVM's aliases accepted)")->transform(processor_name());
  hist->add_flag("--json", h->json, "print JSON");
  hist->callback([&context, &exit_code, h] { exit_code = history(context, *h); });

  auto d = std::make_shared<DiffArgs>();
  CLI::App* df = app.add_subcommand("diff", "The cells that changed between two columns, grouped, with both evidences");
  df->add_option("from", d->from, "the earlier column, e.g. llvm22")->required();
  df->add_option("to", d->to, "the later column, e.g. llvm23 (or an imported one, rocke-v1:llvm22)")->required();
  df->add_option("--target", d->targets,
                 "only these targets (repeatable; a processor keeps its featured targets too: gfx1100 its wave64 one)")
      ->transform(processor_name());
  df->add_option("--group", d->groups,
                 "only these groups of change (repeatable): " + join(change_groups(), ", ") +
                     "; without it, lowering churn is counted but not listed");
  df->add_flag("--json", d->json, "print JSON");
  df->callback([&context, &exit_code, d] { exit_code = diff(context, *d); });

  auto c = std::make_shared<CompareArgs>();
  CLI::App* cmp = app.add_subcommand(
      "compare", "Agreement of a measured column with a peer's rocke-v1 file on shared cells, and every disagreement "
                 "with both evidences (exit 1 if any)");
  cmp->add_option("--flavor", c->flavor, "the measured column")->required();
  cmp->add_option("--with", c->with, "the rocke-v1 file")->required();
  cmp->callback([&context, &exit_code, c] { exit_code = compare(context, *c); });
}

}  // namespace archdb::cli
