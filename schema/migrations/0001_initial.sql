-- schema/migrations/0001_initial.sql — archdb store, schema version 1.
--
-- A column is the set of (key, target) cells of one flavor (an LLVM version line, "llvm22").
-- Invariants, kept by the database itself:
--   * one cell per (flavor, key, target), and a cell always belongs to a column (flavor row);
--   * a status is one of archdb's taxonomy, and never probe_error: that is a defect of the probe, not a
--     measurement, so a run that produced one stores nothing;
--   * evidence is present exactly on the statuses other than ok; lowered_to only on ok;
--   * a measured column names the run that made it; an imported column (someone else's measurement, kept
--     for comparison) never does, and lives under a name of its own ("rocke-v1:llvm22");
--   * every run is recorded, with its outcome; a run still 'running' has no end time.

CREATE TABLE target (
  name TEXT PRIMARY KEY CHECK (name GLOB 'gfx?*')
) WITHOUT ROWID;

CREATE TABLE decl_key (
  name TEXT PRIMARY KEY CHECK (length(name) > 0 AND name NOT GLOB '*[^a-z0-9._-]*')
) WITHOUT ROWID;

CREATE TABLE run (
  id INTEGER PRIMARY KEY,
  flavor TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('regen', 'check')),
  started_at TEXT NOT NULL,   -- UTC, ISO 8601
  ended_at TEXT,
  pid INTEGER NOT NULL,
  toolchain TEXT NOT NULL CHECK (json_valid(toolchain)),
  outcome TEXT NOT NULL CHECK (outcome IN ('running', 'ok', 'failed', 'interrupted')),
  counts TEXT CHECK (counts IS NULL OR json_valid(counts)),
  message TEXT,
  CHECK ((outcome = 'running') = (ended_at IS NULL))
);

CREATE TABLE flavor (
  name TEXT PRIMARY KEY,
  origin TEXT NOT NULL CHECK (origin IN ('measured', 'imported', 'descriptor')),
  provenance TEXT NOT NULL CHECK (json_valid(provenance)),  -- the column's column.json
  source_digest TEXT,                                       -- digest of the data/ files last synced
  run_id INTEGER REFERENCES run(id),
  CHECK (origin = 'measured' OR run_id IS NULL)
) WITHOUT ROWID;

CREATE TABLE cell (
  flavor TEXT NOT NULL REFERENCES flavor(name) ON DELETE CASCADE,
  decl_key TEXT NOT NULL REFERENCES decl_key(name),
  target TEXT NOT NULL REFERENCES target(name),
  status TEXT NOT NULL CHECK (status IN ('ok', 'name_absent', 'signature_mismatch', 'arch_absent',
                                         'target_unsupported', 'toolchain_crash', 'toolchain_timeout')),
  intrinsic TEXT NOT NULL,
  evidence TEXT,
  lowered_to TEXT CHECK (lowered_to IS NULL OR json_valid(lowered_to)),  -- JSON array of mnemonics
  imm INTEGER,
  mc_check TEXT,
  note TEXT,
  PRIMARY KEY (flavor, decl_key, target),
  CHECK ((status = 'ok') = (evidence IS NULL)),
  CHECK (status = 'ok' OR lowered_to IS NULL)
) WITHOUT ROWID;

CREATE INDEX cell_by_key ON cell(decl_key, target);
