// cli/cmd_catalog.cpp — `archdb catalog import --format rocke-decls TABLE [--out FILE]`: a peer's declaration
// table (`KEY<TAB>declare ...` a line) as a catalog that `archdb --catalog FILE regen` measures exactly as
// declared, so that a peer's keys mean what the peer emits (docs/data.md "Measuring a peer's own declarations").
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "schema/catalog.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::cli {
namespace {

constexpr const char* kPeerDeclsFormat = "rocke-decls";

struct CatalogImportArgs {
  std::string table;
  std::string format;
  std::string out;
};

int import_catalog(const CatalogImportArgs& args) {
  if (args.format != kPeerDeclsFormat)
    throw usage_error("unknown format '" + args.format + "' (formats: " + kPeerDeclsFormat + ")");
  std::string text = read_file(args.table);
  std::string catalog = catalog_from_peer_decls(text, args.table, std::filesystem::path(args.table).filename().string());
  if (args.out.empty() || args.out == "-") {
    std::fputs(catalog.c_str(), stdout);
    return kExitOk;
  }
  std::filesystem::path out(args.out);
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec)) throw input_error(args.out + ": is a folder; --out names the catalog file");
  std::filesystem::path parent = out.has_parent_path() ? out.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, ec)) throw input_error(args.out + ": " + parent.string() + " is not an existing folder");
  write_file_atomically(out, catalog);
  std::fprintf(stderr, "wrote %s (%zu keys)\n", args.out.c_str(), parse_catalog(catalog, args.out).entries.size());
  return kExitOk;
}

}  // namespace

void add_catalog(CLI::App& app, Context& context, int& exit_code) {
  (void)context;
  CLI::App* cat = app.add_subcommand("catalog", "Catalogs of keys: make one from a peer's declaration table");
  cat->require_subcommand(1);
  auto args = std::make_shared<CatalogImportArgs>();
  CLI::App* imp = cat->add_subcommand(
      "import", "A peer's declaration table (KEY<TAB>declare line, one a line) as a catalog; measure it with "
                "`archdb --catalog FILE regen`, each key exactly as declared");
  imp->add_option("table", args->table, "the table file")->required();
  imp->add_option("--format", args->format, "rocke-decls (rocKE's decl table, one KEY<TAB>declare line each)")->required();
  imp->add_option("--out", args->out, "the catalog file to write (default: stdout)");
  imp->callback([&exit_code, args] { exit_code = import_catalog(*args); });
}

}  // namespace archdb::cli
