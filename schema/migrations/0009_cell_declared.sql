-- schema/migrations/0009_cell_declared.sql — archdb store, schema version 9: what LLVM itself declares an intrinsic
-- needs on the cell's target (LLVM 23 on: Intrinsic::getRequiredTargetFeatures), beside what was measured, as
-- JSON {"requires": "<feature expression>", "holds": true|false} (db/column.h, DeclaredSupport).
ALTER TABLE cell ADD COLUMN declared TEXT CHECK (declared IS NULL OR json_valid(declared));
