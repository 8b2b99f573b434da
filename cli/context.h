// cli/context.h — what every subcommand shares: where the store, the committed columns, the catalog and the
// target list are, and opening them the same way each time.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "db/store.h"
#include "support/file_lock.h"
#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb::cli {

struct Context {
  // Defaults name the checkout and build folder this archdb was built from; an installed archdb's name its
  // prefix: <prefix>/share/archdb/{data,schema,web} and <prefix>/var/cache/archdb/archdb.sqlite (the user's
  // cache when the prefix is not writable).
  std::string db;            // --db; default: $ARCHDB_DB, else <build dir>/archdb.sqlite
  std::string data;          // --data; default: $ARCHDB_DATA, else <checkout>/data
  std::string catalog;       // --catalog; default: <checkout>/schema/catalog.txt
  std::string targets_file;  // --targets-file; default: <checkout>/schema/targets.txt
  std::string web;           // serve --web; default: <checkout>/service/web
  std::string default_db;    // an installed archdb's own database (its folder is made when it is opened)

  static Context with_defaults();
  Catalog load_catalog() const;
  TargetList load_targets() const;
  // Opens the store and brings it up to date with the committed columns (except `except`).
  std::unique_ptr<Store> open_store(const std::string& except = "") const;
  // One writer per column: every command that writes <data>/<flavor>/ holds this from before it reads what it
  // merges with until its files are written. A second writer waits, saying so on stderr.
  std::unique_ptr<FileLock> lock_column(const std::string& flavor) const;
  // The same lock for <root>/<flavor>/ anywhere (an export's --out folder).
  static std::unique_ptr<FileLock> lock_column_in(const std::filesystem::path& root, const std::string& flavor);
};

// Splits "a,b,c" (empty pieces dropped).
std::vector<std::string> split_list(const std::string& s);

// An --immarg-sweep list ("1,2,4,12,16"): a piece that is no integer is a usage error naming it.
std::vector<int64_t> parse_immarg_sweep(const std::string& text);
std::string immarg_sweep_text(const std::vector<int64_t>& sweep);

// The items of a list file (`--keys @FILE`, `--manifest @LIST`): one a line, blank lines and '#' comments
// skipped, surrounding blanks trimmed. A missing or unreadable file is an input error naming it.
std::vector<std::string> list_file_items(const std::string& path);

// A key list as every `--keys` takes it: "KEY,KEY..." or "@FILE" (one key a line; blank lines and '#'
// comments skipped). Each must be a catalog key — or, where `uncatalogued` (a check), an intrinsic or builtin name
// (names_uncatalogued) — and an unknown one is a usage error naming it (and the file). Keys come back in the
// order given, each once.
std::vector<std::string> catalog_keys(const Catalog& catalog, const std::string& spec, bool uncatalogued = false);

}  // namespace archdb::cli
