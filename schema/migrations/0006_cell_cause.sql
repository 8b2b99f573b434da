-- schema/migrations/0006_cell_cause.sql — archdb store, schema version 6: why a cell that is not ok is what it
-- is, as the probe knew it (db/column.h, Cause: "refusal", "unencodable", "crash", "target_defect", ...), so that
-- nothing reads a cell's evidence text back. NULL: ok, or not known (an imported cell).
ALTER TABLE cell ADD COLUMN cause TEXT CHECK (cause IS NULL OR status <> 'ok');
