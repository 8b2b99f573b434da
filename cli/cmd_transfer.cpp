// cli/cmd_transfer.cpp — `archdb export` and `archdb import`: columns between the database and column folders
// (data/<flavor>/ layout).
#include <cstdio>

#include "cli/commands.h"
#include "db/column_files.h"
#include "support/error.h"

namespace archdb::cli {
namespace fs = std::filesystem;

namespace {

struct ExportArgs {
  std::string flavor;
  std::string out;
};

int do_export(const Context& ctx, const ExportArgs& args) {
  auto store = ctx.open_store();
  auto row = store->flavor(args.flavor);
  if (!row) throw usage_error("unknown flavor '" + args.flavor + "' (not in the database)");
  if (row->origin != Origin::kMeasured)
    throw usage_error("flavor '" + args.flavor + "' is " + std::string(origin_name(row->origin)) +
                      ", not a measured column; it has no data/ form");
  Column column;
  column.provenance = provenance_from_json(nlohmann::json::parse(row->provenance));
  column.cells = store->cells(args.flavor);
  column.sort();
  column.recount();
  fs::path root = args.out.empty() ? fs::path(ctx.data) : fs::path(args.out);
  write_column_dir(root, column);
  std::printf("wrote %s (%zu cells)\n", (root / args.flavor).string().c_str(), column.cells.size());
  return kExitOk;
}

int do_import(const Context& ctx, const std::string& dir_arg) {
  fs::path dir = fs::path(dir_arg).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  if (!fs::is_directory(dir)) throw input_error(dir.string() + ": not a column folder (expected column.json and cells.jsonl)");
  Column column = read_column_dir(dir);  // validates everything, names file and line
  std::string flavor = column.provenance.flavor;
  fs::path target = fs::path(ctx.data) / flavor;
  if (fs::exists(target) && fs::equivalent(target, dir)) throw usage_error(dir.string() + " is already the committed column");
  auto store = ctx.open_store(flavor);
  store->replace_column(flavor, Origin::kMeasured, render_column_json(column), column.cells, column_digest(column),
                        std::nullopt);
  write_column_dir(ctx.data, column);
  std::printf("imported %s: %zu cells into %s and %s\n", flavor.c_str(), column.cells.size(), target.string().c_str(),
              ctx.db.c_str());
  return kExitOk;
}

}  // namespace

void add_transfer(CLI::App& app, Context& context, int& exit_code) {
  auto ex = std::make_shared<ExportArgs>();
  CLI::App* exp = app.add_subcommand("export", "Write a measured column from the database as a column folder (data/<flavor>/)");
  exp->add_option("--flavor", ex->flavor, "the flavor to export")->required();
  exp->add_option("--out", ex->out, "folder to write <flavor>/ into (default: the data folder)");
  exp->callback([&context, &exit_code, ex] { exit_code = do_export(context, *ex); });

  auto dir = std::make_shared<std::string>();
  CLI::App* imp = app.add_subcommand(
      "import", "Load a column folder (column.json + cells.jsonl, e.g. measured on another host) into the database and data/");
  imp->add_option("folder", *dir, "the column folder; its column.json names the flavor")->required();
  imp->callback([&context, &exit_code, dir] { exit_code = do_import(context, *dir); });
}

}  // namespace archdb::cli
