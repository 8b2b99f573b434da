-- schema/migrations/0010_frontend_crashed.sql — archdb store, schema version 10: the front end's third answer, clang
-- crashed on the call (no answer; db/frontend.h), beside accepted and rejected. SQLite cannot widen a CHECK, so the
-- front-end tables are emptied and the cell table made anew; the next open reads them again from
-- data/<flavor>/frontend.txt, their source.
DROP TABLE frontend_cell;
DELETE FROM frontend_key;
DELETE FROM frontend;
CREATE TABLE frontend_cell (
  flavor TEXT NOT NULL,
  key TEXT NOT NULL,
  target TEXT NOT NULL CHECK (target GLOB 'gfx?*'),
  status TEXT NOT NULL CHECK (status IN ('accepted', 'rejected', 'crashed')),
  diagnostic TEXT,  -- rejected: clang's first error; crashed: what clang said
  emitted TEXT,     -- accepted: the intrinsic calls clang emitted for the builtin (JSON array)
  PRIMARY KEY (flavor, key, target),
  FOREIGN KEY (flavor, key) REFERENCES frontend_key(flavor, key) ON DELETE CASCADE,
  CHECK ((status <> 'accepted') = (diagnostic IS NOT NULL)),
  CHECK (emitted IS NULL OR json_valid(emitted))
) WITHOUT ROWID;
