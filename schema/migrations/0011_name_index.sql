-- schema/migrations/0011_name_index.sql — archdb store, schema version 11: the search's name index (db/search.h),
-- kept while what it is built from is unchanged (the catalog's keys and the columns', censuses' and front ends'
-- stored digests), so a command that reads a name does not build it again. It is derived data: dropping the row
-- loses nothing but time.
CREATE TABLE name_index (
  id INTEGER PRIMARY KEY CHECK (id = 1),  -- one index: the current one
  inputs TEXT NOT NULL,                   -- the digest of what it was built from
  entries TEXT NOT NULL                   -- one entry a line: kind TAB name TAB flavors TAB means TAB instantiations
);
