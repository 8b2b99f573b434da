// cli/cmd_search.cpp — `archdb search TEXT`: catalog keys, intrinsic names, clang builtins and instruction
// mnemonics matching TEXT in any spelling, ranked, each with what it leads to and the command that answers it
// (db/search.h); and the resolution `query` and `history` give a name that is not a catalog key.
#include <cstdio>

#include "cli/commands.h"
#include "cli/table.h"
#include "db/search.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb::cli {

NameAsked read_name(const Context& ctx, const Store& store, const std::string& name, bool json) {
  Catalog catalog = ctx.load_catalog();
  if (catalog.find(name)) return {name, "", std::nullopt};
  auto r = NameIndex::load_or_build(catalog, store).resolve(name);
  if (!r) return {name, "", name};  // the censuses may still know it (or say why not)
  if (r->kind == NameKind::kKey) return {r->name, r->how, std::nullopt};
  if (!r->how.empty() && !json) std::printf("%s: %s\n\n", name.c_str(), r->how.c_str());
  return {name, r->how, r->name};
}

std::string unknown_name_message(const Context& ctx, const Store& store, const std::string& name) {
  return NameIndex::load_or_build(ctx.load_catalog(), store).unknown_message(name, "`archdb search " + name + "`");
}

namespace {

struct SearchArgs {
  std::string text;
  size_t limit = 20;
  bool json = false;
};

std::string brief_list(const std::vector<std::string>& items, size_t shown) {
  std::vector<std::string> head(items.begin(), items.begin() + static_cast<long>(std::min(shown, items.size())));
  std::string s = join(head, ", ");
  if (items.size() > shown) s += " (+" + std::to_string(items.size() - shown) + ")";
  return s;
}

int search(const Context& ctx, const SearchArgs& args) {
  if (normalize_name(args.text).empty()) throw usage_error("search: give a name or part of one");
  auto store = ctx.open_store();
  NameIndex index = NameIndex::load_or_build(ctx.load_catalog(), *store);
  size_t total = 0;
  auto hits = index.search(args.text, args.limit, &total);
  if (args.json) {
    std::printf("%s\n", name_hits_json(args.text, hits, total).dump(2).c_str());
    return kExitOk;
  }
  if (hits.empty()) {
    std::printf("nothing matches '%s' among %zu names (catalog keys, intrinsics, builtins, mnemonics)\n",
                args.text.c_str(), index.size());
    return kExitDifferent;  // as grep: 1 when nothing matches
  }
  Table table({"kind", "name", "match", "leads to", "flavors", "answered by"});
  for (const auto& h : hits) {
    const NameEntry& e = *h.entry;
    std::string flavors = e.flavors.empty() ? "-" : e.flavors.size() == 1 ? e.flavors.front()
                                                                           : e.flavors.front() + ".." + e.flavors.back();
    table.add({std::string(name_kind_name(e.kind)), e.name, std::string(name_match_name(h.match)), brief_list(e.means, 3),
               flavors, NameIndex::command_for(e)});
  }
  std::printf("%s", table.render().c_str());
  std::printf("%zu of %zu matches for '%s'%s\n", hits.size(), total, args.text.c_str(),
              total > hits.size() ? " (--limit shows more)" : "");
  return kExitOk;
}

}  // namespace

void add_search(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* sub = app.add_subcommand(
      "search", "Find catalog keys, intrinsics, builtins and instruction mnemonics by any spelling of their name "
                "(llvm.amdgcn.x, __builtin_amdgcn_x, x, v_x), ranked, with the command that answers each");
  sub->add_option("text", args->text, "a name or part of one, e.g. mfma_f32_4x4x4bf16 or s_sleep_var")->required();
  sub->add_option("--limit", args->limit, "hits shown, best first")->default_val(20)->check(CLI::Range(1, 100000));
  sub->add_flag("--json", args->json, "print JSON");
  sub->callback([&context, &exit_code, args] { exit_code = search(context, *args); });
}

}  // namespace archdb::cli
