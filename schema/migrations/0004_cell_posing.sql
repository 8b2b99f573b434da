-- schema/migrations/0004_cell_posing.sql — archdb store, schema version 4: how an ok cell's call was posed when
-- it was not the default way (docs/measuring.md "How the probe measures", step 3): e.g. "immediates 1, 0, 0, 0",
-- "uniform operands", "result unused". NULL: the default posing (or the immediate sweep, kept in imm).
ALTER TABLE cell ADD COLUMN posing TEXT CHECK (posing IS NULL OR status = 'ok');
