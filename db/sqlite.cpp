// db/sqlite.cpp — see sqlite.h.
#include "db/sqlite.h"

#include "support/error.h"

namespace archdb {

namespace {
ExitCode code_of(int rc) { return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? kExitBadInput : kExitInternal; }
}  // namespace

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
    throw internal_error(std::string("database: cannot prepare statement: ") + sqlite3_errmsg(db));
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
  throw Error(code_of(rc), std::string("database: ") + sqlite3_errmsg(db_));
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

void exec(sqlite3* db, const std::string& sql, const std::filesystem::path& path) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error(code_of(sqlite3_errcode(db)), path.string() + ": " + msg);
  }
}

Transaction::Transaction(sqlite3* db, std::filesystem::path path, const char* begin)
    : db_(db), path_(std::move(path)) {
  exec(db_, begin, path_);
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT", path_);
  done_ = true;
}

}  // namespace archdb
