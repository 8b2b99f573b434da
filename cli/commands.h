// cli/commands.h — the subcommands of `archdb`, each registered on the CLI11 app by its own file.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "db/rocke.h"
#include "db/search.h"

namespace archdb::cli {

// Each adds one subcommand whose callback sets `exit_code`.
void add_regen(CLI::App& app, Context& context, int& exit_code);
void add_query(CLI::App& app, Context& context, int& exit_code);
void add_coverage(CLI::App& app, Context& context, int& exit_code);
void add_transfer(CLI::App& app, Context& context, int& exit_code);  // import, export
void add_history(CLI::App& app, Context& context, int& exit_code);  // history, diff, compare
void add_runs(CLI::App& app, Context& context, int& exit_code);
void add_intrinsic(CLI::App& app, Context& context, int& exit_code);
void add_bench(CLI::App& app, Context& context, int& exit_code);
void add_check(CLI::App& app, Context& context, int& exit_code);
void add_serve(CLI::App& app, Context& context, int& exit_code);  // the HTTP service
void add_site(CLI::App& app, Context& context, int& exit_code);   // the service's answers as a static site
void add_code_object(CLI::App& app, Context& context, int& exit_code);
void add_wgrad(CLI::App& app, Context& context, int& exit_code);  // the bundled wgrad kernels on the CPU
void add_census(CLI::App& app, Context& context, int& exit_code);  // census, frontend, disagreements, findings
void add_crosscheck(CLI::App& app, Context& context, int& exit_code);  // the census against LLVM's tests
void add_catalog(CLI::App& app, Context& context, int& exit_code);  // catalog import (a peer's declarations)
void add_search(CLI::App& app, Context& context, int& exit_code);

// What `query` and `history` answer for NAME (db/search.h NameIndex::resolve): the catalog key it stands for, with
// `how` another spelling led there; or, where `census` is set, the intrinsic the censuses answer (`how` printed
// first on the command line where it says something). A name that resolves to nothing stays the key asked for.
struct NameAsked {
  std::string key;
  std::string how;
  std::optional<std::string> census;
};
NameAsked read_name(const Context& ctx, const Store& store, const std::string& name, bool json);
// The error for a name that resolves to nothing, naming what `archdb search` finds for it.
std::string unknown_name_message(const Context& ctx, const Store& store, const std::string& name);

// Shared by regen and bench: the catalog entries and targets a measurement covers.
struct Scope {
  std::vector<const CatalogEntry*> entries;
  std::vector<std::string> targets;
};
// `keys` (exact keys, as catalog_keys takes them) or else `only` (keys containing it) narrows the entries.
Scope select_scope(const Catalog& catalog, const TargetList& wired, const std::string& only,
                   const std::string& targets, const std::string& keys = "");

// Every option that takes a GPU target uses this: LLVM's own spellings are accepted, an alias ("tahiti",
// "fiji") becoming the gfx name the columns use (canonical_processor), so that output names the canonical one.
CLI::Validator processor_name();

// A peer's rocke-v1 file, validated: its arches must be wired targets or processors the linked LLVM knows.
RockeColumn read_rocke(const Context& ctx, const std::string& text, const std::string& label);

}  // namespace archdb::cli
