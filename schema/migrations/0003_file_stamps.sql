-- schema/migrations/0003_file_stamps.sql — archdb store, schema version 3: what the committed files of data/
-- looked like (stat) when their digest was last computed, so that a command re-reads only what changed.
--
-- A stamp is the files' size, modification and status-change times (ns), inode and device; ctime changes on
-- every write and cannot be set back, so an unchanged stamp means unchanged bytes. A stamp is remembered only
-- for files last changed well before it was taken (a file written in the same clock tick as the stamp could
-- change again without changing it).
CREATE TABLE file_stamp (
  key TEXT PRIMARY KEY,     -- what the digest is of, e.g. 'column:llvm22', 'census:llvm22'
  stamp TEXT NOT NULL,
  digest TEXT NOT NULL
) WITHOUT ROWID;
