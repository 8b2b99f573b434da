// cli/cmd_transfer.cpp — `archdb export` and `archdb import`: columns between the database and column folders
// (data/<flavor>/ layout).
#include <algorithm>
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "db/column_files.h"
#include "db/rocke.h"
#include "schema/targets.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb::cli {
namespace fs = std::filesystem;

RockeColumn read_rocke(const Context& ctx, const std::string& text, const std::string& label) {
  TargetList wired = ctx.load_targets();
  return parse_rocke(text, label, [&](const std::string& arch) { return wired.contains(arch) || knows_processor(arch); });
}

namespace {

struct ExportArgs {
  std::string flavor;
  std::string out;
  std::string format = "archdb";
  std::string keys;                  // rocke-v1: "K,K.." or "@FILE" (catalog_keys)
  std::vector<std::string> targets;  // rocke-v1: canonical processor names
};

// Narrows a column to the keys and targets a peer's file is to hold, exactly those: a key the catalog lacks
// or the column has no cells for, or a target the column was not measured on, is an error naming it.
void select_for_peer(const Context& ctx, const ExportArgs& args, Column& column) {
  if (!args.keys.empty()) {
    std::vector<std::string> keys = catalog_keys(ctx.load_catalog(), args.keys);
    std::set<std::string> wanted(keys.begin(), keys.end()), measured;
    for (const auto& c : column.cells) measured.insert(c.key);
    for (const auto& k : keys)
      if (!measured.count(k)) throw usage_error("key '" + k + "' has no cells in " + args.flavor + " (measure it first)");
    column.cells.erase(std::remove_if(column.cells.begin(), column.cells.end(),
                                      [&](const Cell& c) { return !wanted.count(c.key); }),
                       column.cells.end());
  }
  // rocKE's format names processors (its arches): a target measured with features beyond its processor's
  // (gfx1100:+wavefrontsize64,...) has no place in it, so the whole column means its plain processors.
  std::vector<std::string> targets = args.targets;
  if (targets.empty())
    for (const auto& t : column.provenance.targets)
      if (target_features(t).empty()) targets.push_back(t);
  std::set<std::string> wanted;
  for (const auto& t : targets) {
    if (std::find(column.provenance.targets.begin(), column.provenance.targets.end(), t) ==
        column.provenance.targets.end())
      throw usage_error("unknown target '" + t + "' (" + args.flavor + " was measured on: " +
                        join(column.provenance.targets, ", ") + ")");
    if (!target_features(t).empty())
      throw usage_error("target '" + t + "' has features: rocKE's format names processors (arches) only");
    if (!wanted.insert(t).second) throw usage_error("--targets names '" + t + "' twice");
  }
  column.cells.erase(std::remove_if(column.cells.begin(), column.cells.end(),
                                    [&](const Cell& c) { return !wanted.count(c.target); }),
                     column.cells.end());
  column.provenance.targets = targets;
  column.recount();
}

void check_format(const std::string& format) {
  if (format != "archdb" && format != kRockeFormat)
    throw usage_error("unknown format '" + format + "' (formats: archdb, " + std::string(kRockeFormat) + ")");
}

int do_export(const Context& ctx, const ExportArgs& args) {
  check_format(args.format);
  if (args.format != kRockeFormat && (!args.keys.empty() || !args.targets.empty()))
    throw usage_error("--keys and --targets choose what a rocke-v1 file holds; an archdb column folder is written whole");
  // The column is read under its lock, and the lock is held until the copy is written: a regeneration
  // that began meanwhile is waited for and then read, never overwritten by what was read before it.
  std::error_code ec;
  std::unique_ptr<FileLock> reading;
  if (fs::is_directory(ctx.data, ec)) reading = ctx.lock_column(args.flavor);
  auto store = ctx.open_store();
  auto row = store->flavor(args.flavor);
  if (!row) throw usage_error("unknown flavor '" + args.flavor + "' (not in the database)");
  if (row->origin != Origin::kMeasured)
    throw usage_error("flavor '" + args.flavor + "' is " + std::string(origin_name(row->origin)) +
                      ", not a measured column; it has no data/ form");
  Column column;
  nlohmann::json provenance = nlohmann::json::parse(row->provenance, nullptr, /*allow_exceptions=*/false);
  if (provenance.is_discarded())
    throw input_error(ctx.db + ": the database holds damaged JSON (the provenance of " + args.flavor + ")");
  column.provenance = provenance_from_json(provenance);
  column.cells = store->cells(args.flavor);
  column.sort();
  column.recount();
  if (args.format == kRockeFormat) {
    select_for_peer(ctx, args, column);
    std::string text = render_rocke(column);
    if (args.out.empty() || args.out == "-") {
      std::fputs(text.c_str(), stdout);
    } else {
      fs::path out(args.out);
      std::error_code ec;
      if (fs::is_directory(out, ec))
        throw input_error(args.out + ": is a folder; --format rocke-v1 --out names the file to write");
      fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
      if (!fs::is_directory(parent, ec)) throw input_error(args.out + ": " + parent.string() + " is not an existing folder");
      write_file_atomically(out, text);
      std::fprintf(stderr, "wrote %s (%zu cells)\n", args.out.c_str(), column.cells.size());
    }
    return kExitOk;
  }
  fs::path root = args.out.empty() ? fs::path(ctx.data) : fs::path(args.out);
  if (fs::exists(root, ec) && !fs::is_directory(root, ec))
    throw input_error(root.string() + ": not a folder; --out names the folder to write " + args.flavor + "/ into");
  if (!args.out.empty()) {
    fs::path folder = root.lexically_normal();
    if (!folder.has_filename()) folder = folder.parent_path();  // "out/"
    fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
      throw input_error(args.out + ": " + parent.string() + " is not an existing folder");
  }
  fs::create_directories(root);  // its parent exists (checked above); the lock lives in it
  // Another folder has its own writers; the data folder's lock is held already (a second flock of the same
  // file from this process would wait for itself).
  std::unique_ptr<FileLock> writing;
  if (!reading || !fs::equivalent(root, ctx.data, ec)) writing = Context::lock_column_in(root, args.flavor);
  write_column_dir(root, column);
  std::printf("wrote %s (%zu cells)\n", (root / args.flavor).string().c_str(), column.cells.size());
  return kExitOk;
}

// A peer's column: kept in the database under a name of its own, marked imported, never written to data/.
int import_rocke(const Context& ctx, const std::string& file) {
  std::string text = read_file(file);
  RockeColumn col = read_rocke(ctx, text, file);
  std::string name = imported_name(kRockeFormat, col.flavor);
  nlohmann::ordered_json provenance;
  provenance["format"] = kRockeFormat;
  provenance["source"] = fs::path(file).filename().string();
  provenance["flavor"] = col.flavor;
  provenance["toolchain"] = col.toolchain;
  auto store = ctx.open_store();
  if (auto existing = store->flavor(name); existing && existing->origin == Origin::kImported) {
    auto was = nlohmann::json::parse(existing->provenance, nullptr, false);
    std::string source = was.is_object() && was.contains("source") && was["source"].is_string()
                             ? was["source"].get<std::string>() : "an earlier import";
    std::fprintf(stderr, "archdb: replacing imported column %s (from %s) with %s\n", name.c_str(), source.c_str(),
                 file.c_str());
  }
  store->replace_column(name, Origin::kImported, provenance.dump(), col.cells, digest_hex(text), std::nullopt);
  std::printf("imported %s as %s: %zu cells on %zu targets (imported, not measured here)\n", file.c_str(), name.c_str(),
              col.cells.size(), col.arches.size());
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
  auto writing = ctx.lock_column(flavor);
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
  exp->add_option("--out", ex->out,
                  "archdb: folder to write <flavor>/ into (default: the data folder); rocke-v1: file (default: stdout)");
  exp->add_option("--format", ex->format, "archdb (a column folder) or rocke-v1 (rocKE's arch-domain JSON)");
  exp->add_option("--keys", ex->keys, "rocke-v1: exactly these keys (KEY,KEY... or @FILE, one key a line)");
  exp->add_option("--targets", ex->targets, "rocke-v1: exactly these targets (comma-separated; LLVM's aliases accepted)")
      ->delimiter(',')
      ->transform(processor_name());
  exp->callback([&context, &exit_code, ex] { exit_code = do_export(context, *ex); });

  auto dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("archdb");
  CLI::App* imp = app.add_subcommand(
      "import", "Load a column: archdb format (a column folder measured on another host) into the database and data/; "
                "rocke-v1 (a peer's file) into the database only, as an imported column named rocke-v1:<flavor>");
  imp->add_option("path", *dir, "the column folder, or the rocke-v1 file")->required();
  imp->add_option("--format", *format, "archdb or rocke-v1");
  imp->callback([&context, &exit_code, dir, format] {
    check_format(*format);
    exit_code = *format == kRockeFormat ? import_rocke(context, *dir) : do_import(context, *dir);
  });
}

}  // namespace archdb::cli
