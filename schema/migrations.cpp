// schema/migrations.cpp — the embedded list of schema migrations (generated include of schema/migrations/*.sql).
#include "schema/migrations.h"

namespace archdb {

const std::vector<Migration>& schema_migrations() {
  static const std::vector<Migration> kMigrations = {
#include "schema_migrations.inc"
  };
  return kMigrations;
}

}  // namespace archdb
