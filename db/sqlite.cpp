// db/sqlite.cpp — see sqlite.h.
#include "db/sqlite.h"

#include "support/error.h"

namespace archdb {

std::string database_file(sqlite3* db) {
  const char* f = sqlite3_db_filename(db, "main");
  return f && *f ? f : "(in-memory database)";
}

Error database_error(sqlite3* db, int rc, const std::string& message) {
  int primary = rc & 0xff;
  // A corrupt or foreign file is the user's input, whichever statement trips over it.
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    return input_error(database_file(db) + ": database is corrupt or not an archdb database (" + message + ")");
  // So is a path that is no database file at all (a device, /proc), one that cannot be read or written, and a
  // database whose tables were dropped or altered after the migrations made them.
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_PERM || primary == SQLITE_READONLY ||
      primary == SQLITE_FULL || primary == SQLITE_AUTH)
    return input_error(database_file(db) + ": cannot use this database file (" + message + ")");
  if (primary == SQLITE_ERROR && (message.rfind("no such table", 0) == 0 || message.rfind("no such column", 0) == 0))
    return input_error(database_file(db) + ": the database's tables are damaged (" + message + ")");
  return internal_error(database_file(db) + ": " + message);
}

namespace {
template <typename Json>
Json parse_stored(sqlite3* db, const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    throw input_error(database_file(db) + ": the database holds damaged JSON (" +
                      (text.size() > 40 ? text.substr(0, 40) + "..." : text) + ")");
  return j;
}
}  // namespace

nlohmann::json stored_json(sqlite3* db, const std::string& text) { return parse_stored<nlohmann::json>(db, text); }

nlohmann::ordered_json stored_ordered_json(sqlite3* db, const std::string& text) {
  return parse_stored<nlohmann::ordered_json>(db, text);
}

std::vector<std::string> stored_string_list(sqlite3* db, const std::string& text) {
  nlohmann::json j = stored_json(db, text);
  std::vector<std::string> out;
  if (!j.is_array()) throw input_error(database_file(db) + ": the database holds " + j.dump() + " where a list belongs");
  for (const auto& e : j) {
    if (!e.is_string()) throw input_error(database_file(db) + ": the database holds " + j.dump() + " where a list of names belongs");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr);
  if (rc != SQLITE_OK) throw database_error(db, rc, sqlite3_errmsg(db));
}

Stmt& Stmt::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind_or_null(int i, const std::string& v) {
  if (v.empty()) sqlite3_bind_null(s_, i);
  else bind(i, v);
  return *this;
}

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, std::optional<int64_t> v) {
  if (v) sqlite3_bind_int64(s_, i, *v);
  else sqlite3_bind_null(s_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw database_error(db_, rc, sqlite3_errmsg(db_));
}

void Stmt::run() {
  while (step()) {
  }
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string Stmt::text(int col) const {
  const unsigned char* t = sqlite3_column_text(s_, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw database_error(db, rc, msg);
  }
}

Transaction::Transaction(sqlite3* db, const char* begin) : db_(db) { exec(db_, begin); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  done_ = true;
}

}  // namespace archdb
