// cli/context.cpp — default locations and opening of the store (see context.h).
#include "cli/context.h"

#include "db/census.h"
#include "db/frontend.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include <unistd.h>

namespace archdb::cli {

namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// An installed archdb (`cmake --install`) finds its catalog, columns and page in <prefix>/share/archdb and keeps
// its database in <prefix>/var/cache/archdb (the folders relative to <prefix>/bin that cli/CMakeLists.txt
// computes from GNUInstallDirs); a build-tree archdb uses the checkout it was built from and its build folder.
struct Installed {
  std::filesystem::path share;
  std::filesystem::path db_dir;
};

std::optional<Installed> installed_layout() {
  std::error_code ec;
  std::filesystem::path bin = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return std::nullopt;
  std::filesystem::path share = (bin / ARCHDB_INSTALLED_SHARE_FROM_BIN).lexically_normal();
  if (!std::filesystem::exists(share / "schema" / "catalog.txt", ec)) return std::nullopt;
  return Installed{share, (bin / ARCHDB_INSTALLED_DB_FROM_BIN).lexically_normal()};
}

std::string user_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/archdb";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/archdb";
  return "/tmp/archdb-cache";
}

// The prefix's database folder when this user can write there (it, or the folder it would be made in); a prefix
// this user cannot write (a system install run by someone else) leaves the database to the user's cache. Nothing
// is made here: a command that opens the default database makes its folder (open_store), one given --db does not.
std::string installed_db_dir(const std::filesystem::path& under_prefix) {
  std::error_code ec;
  std::filesystem::path existing = under_prefix;
  while (!existing.empty() && !std::filesystem::exists(existing, ec)) existing = existing.parent_path();
  if (!existing.empty() && ::access(existing.c_str(), W_OK) == 0) return under_prefix.string();
  return user_cache_dir();
}
}  // namespace

Context Context::with_defaults() {
  Context c;
  const std::optional<Installed> installed = installed_layout();
  const std::string source = installed ? installed->share.string() : ARCHDB_SOURCE_DIR;
  const std::string db_dir = installed ? installed_db_dir(installed->db_dir) : ARCHDB_BINARY_DIR;
  if (installed) c.default_db = db_dir + "/archdb.sqlite";
  c.db = env_or("ARCHDB_DB", db_dir + "/archdb.sqlite");
  c.data = env_or("ARCHDB_DATA", source + "/data");
  c.catalog = source + "/schema/catalog.txt";
  c.targets_file = source + "/schema/targets.txt";
  c.web = installed ? source + "/web" : source + "/service/web";
  return c;
}

Catalog Context::load_catalog() const { return archdb::load_catalog(catalog); }
TargetList Context::load_targets() const { return archdb::load_targets(targets_file); }

std::unique_ptr<Store> Context::open_store(const std::string& except) const {
  if (!default_db.empty() && db == default_db) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(db).parent_path(), ec);  // opening reports a failure
  }
  auto store = Store::open(db);
  SyncLock lock(db);
  store->mark_interrupted_runs();
  sync_store_from_data(*store, data, except);
  sync_census_from_data(*store, data);
  sync_frontend_from_data(*store, data);
  return store;
}

std::unique_ptr<FileLock> Context::lock_column(const std::string& flavor) const { return lock_column_in(data, flavor); }

std::unique_ptr<FileLock> Context::lock_column_in(const std::filesystem::path& root, const std::string& flavor) {
  std::filesystem::path dir = root / flavor;
  return std::make_unique<FileLock>(root / ("." + flavor + ".write-lock"), [&](const std::string& holder) {
    std::fprintf(stderr, "archdb: %s is being written by another archdb%s; waiting for it\n", dir.c_str(),
                 holder.empty() ? "" : (" (pid " + holder + ")").c_str());
  });
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t b = part.find_first_not_of(" \t"), e = part.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<int64_t> parse_immarg_sweep(const std::string& text) {
  std::vector<int64_t> sweep;
  for (const auto& v : split_list(text)) {
    try {
      sweep.push_back(std::stoll(v));
    } catch (const std::exception&) {
      throw usage_error("--immarg-sweep: '" + v + "' is not an integer");
    }
  }
  return sweep;
}

std::string immarg_sweep_text(const std::vector<int64_t>& sweep) {
  std::string text;
  for (int64_t v : sweep) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

std::vector<std::string> list_file_items(const std::string& path) {
  std::vector<std::string> items;
  for (const auto& raw : split(read_file(path), '\n')) {
    std::string line = raw.substr(0, raw.find('#'));
    size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) items.push_back(line.substr(b, e - b + 1));
  }
  return items;
}

std::vector<std::string> catalog_keys(const Catalog& catalog, const std::string& spec, bool uncatalogued) {
  std::vector<std::string> given;
  std::string where = "--keys";
  if (!spec.empty() && spec[0] == '@') {
    std::string path = spec.substr(1);
    if (path.empty()) throw usage_error("--keys @FILE names no file");
    where = path;
    for (const auto& line : list_file_items(path)) {
      if (line.find_first_of(" \t") != std::string::npos)
        throw input_error(path + ": '" + line + "' is not a key (one key a line)");
      given.push_back(line);
    }
  } else {
    given = split_list(spec);
  }
  if (given.empty()) throw usage_error(where + " names no key");
  std::vector<std::string> keys;
  for (const auto& k : given) {
    if (!catalog.find(k) && !(uncatalogued && names_uncatalogued(k)))
      throw usage_error(where + ": unknown key '" + k + "' (" +
                        (uncatalogued ? "neither in the catalog nor " + std::string(kUncataloguedNames) : "not in the catalog") + ")");
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

}  // namespace archdb::cli
