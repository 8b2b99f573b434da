-- schema/migrations/0007_cell_posed.sql — archdb store, schema version 7: the call a cell answers, as the probe
-- posed it (db/column.h, CallPosing, as JSON: {"imm": [...], "operands": "uniform"|"divergent",
-- "result": "used"|"unused"}), so that a check answers a call only from a cell posed as that call. It replaces
-- the columns imm and posing (4), which newer versions leave NULL.
ALTER TABLE cell ADD COLUMN posed TEXT CHECK (posed IS NULL OR json_valid(posed));
