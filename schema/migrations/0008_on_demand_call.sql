-- schema/migrations/0008_on_demand_call.sql — archdb store, schema version 8: an on-demand cell answers one call
-- of an instantiation (docs/checker.md "The checker": a kernel that uses the result of an atomic the census found lowering
-- only with its result unused is measured as it calls it). `call` is the call's posing as the data contract
-- writes it (db/column.h, posing_to_json), '' for an instantiation measured the census's way (every fair posing
-- tried). The cells of version 5 are kept as the census's way.
CREATE TABLE on_demand_call (
  flavor TEXT NOT NULL CHECK (flavor GLOB 'llvm[0-9]*'),
  key TEXT NOT NULL CHECK (key GLOB 'llvm.amdgcn.?*'),   -- the instantiation, as the kernel's IR names it
  target TEXT NOT NULL,
  call TEXT NOT NULL CHECK (call = '' OR json_valid(call)),
  cell TEXT NOT NULL CHECK (json_valid(cell)),            -- the data contract's cell
  identity TEXT NOT NULL,                                 -- the toolchain that measured it
  PRIMARY KEY (flavor, key, target, call)
) WITHOUT ROWID;
INSERT INTO on_demand_call(flavor, key, target, call, cell, identity)
  SELECT flavor, key, target, '', cell, identity FROM on_demand_cell;
DROP TABLE on_demand_cell;
