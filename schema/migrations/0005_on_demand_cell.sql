-- schema/migrations/0005_on_demand_cell.sql — archdb store, schema version 5: cells of instantiations the census
-- did not measure, measured when a check asked for them (docs/checker.md "The checker": a kernel calls
-- llvm.amdgcn.cos.f64 where the census measured llvm.amdgcn.cos.f32). Each was measured by this host's build
-- of the flavor (its toolchain identity kept); they answer later checks as the census would, and are never
-- committed: the census in data/ stays what `archdb census` measured.
CREATE TABLE on_demand_cell (
  flavor TEXT NOT NULL CHECK (flavor GLOB 'llvm[0-9]*'),
  key TEXT NOT NULL CHECK (key GLOB 'llvm.amdgcn.?*'),   -- the instantiation, as the kernel's IR names it
  target TEXT NOT NULL,
  cell TEXT NOT NULL CHECK (json_valid(cell)),            -- the data contract's cell
  identity TEXT NOT NULL,                                 -- the toolchain that measured it
  PRIMARY KEY (flavor, key, target)
) WITHOUT ROWID;
