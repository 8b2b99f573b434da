// db/sqlite.h — the SQLite helpers the store's implementation files share (store.cpp, census.cpp,
// frontend.cpp): a prepared statement, one-shot execution, and a transaction that rolls back unless
// committed. Internal to db/; errors name the database file, and a corrupt file is bad input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "support/error.h"

namespace archdb {

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v);
  Stmt& bind_or_null(int i, const std::string& v);  // an empty string binds NULL
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, std::optional<int64_t> v);
  bool step();  // true: a row is ready
  void run();   // steps to the end, then resets for the next bindings

  sqlite3* db() const { return db_; }
  std::string text(int col) const;
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }
  bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// The file a connection has open (its absolute path), for messages.
std::string database_file(sqlite3* db);
// The error for a failed SQLite call with result code `rc`: a corrupt or foreign file (SQLITE_CORRUPT,
// SQLITE_NOTADB) is bad input naming the file; anything else is an internal error naming it.
Error database_error(sqlite3* db, int rc, const std::string& message);

// JSON the database keeps (a cell's lowered_to, a provenance, a census group's detail). Damaged JSON is a
// damaged database: bad input naming the file, never an internal error.
nlohmann::json stored_json(sqlite3* db, const std::string& text);
nlohmann::ordered_json stored_ordered_json(sqlite3* db, const std::string& text);
std::vector<std::string> stored_string_list(sqlite3* db, const std::string& text);

void exec(sqlite3* db, const std::string& sql);

// `begin` on construction (BEGIN IMMEDIATE for writes, BEGIN for a consistent read); ROLLBACK unless
// commit() ran.
class Transaction {
 public:
  explicit Transaction(sqlite3* db, const char* begin = "BEGIN IMMEDIATE");
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace archdb
