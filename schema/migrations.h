// schema/migrations.h — the SQLite schema as an ordered list of migrations (schema/migrations/NNNN_*.sql),
// embedded in the binary. Migration i brings a database from user_version i to i+1.
#pragma once

#include <string_view>
#include <vector>

namespace archdb {

struct Migration {
  int version;           // the user_version after applying it
  std::string_view name; // file name
  std::string_view sql;
};

const std::vector<Migration>& schema_migrations();

}  // namespace archdb
