-- schema/migrations/0002_census.sql — archdb store, schema version 2: the census and the front-end axis.
--
-- The census of a flavor: every llvm.amdgcn.* intrinsic of that LLVM, instantiated (an overloaded one with
-- concrete overload types; its key is the mangled name), on every gfx processor that LLVM knows.
-- Invariants, kept by the database itself:
--   * one census per flavor; its instantiations, cells and not-probed intrinsics go with it;
--   * the cells of an instantiation have the statuses and evidence rules of a catalog cell, never
--     probe_error (census_group below);
--   * an intrinsic that could not be instantiated is listed with its reason and has no cell: it is never
--     given a status.
-- The front end: for catalog keys with a clang builtin, whether clang of the same flavor accepts the
-- builtin for each processor ('accepted', with the intrinsic it emitted; 'rejected', with clang's
-- diagnostic). Keys without a builtin are listed with the reason.

CREATE TABLE census (
  flavor TEXT PRIMARY KEY CHECK (flavor GLOB 'llvm[0-9]*'),
  provenance TEXT NOT NULL CHECK (json_valid(provenance)),
  source_digest TEXT
) WITHOUT ROWID;

CREATE TABLE census_instantiation (
  flavor TEXT NOT NULL REFERENCES census(flavor) ON DELETE CASCADE,
  key TEXT NOT NULL CHECK (key GLOB 'llvm.amdgcn.?*'),
  intrinsic TEXT NOT NULL CHECK (intrinsic GLOB 'llvm.amdgcn.?*'),
  overload_types TEXT NOT NULL CHECK (json_valid(overload_types)),
  PRIMARY KEY (flavor, key)
) WITHOUT ROWID;

CREATE INDEX census_instantiation_by_intrinsic ON census_instantiation(flavor, intrinsic);

-- The cells of an instantiation, grouped as the committed form groups them: the processors whose cells agree
-- in everything but the processor, with the rest of their cell as JSON (evidence, lowered_to, imm, mc_check,
-- note; intrinsic where LLVM resolved another name). Kept grouped, the census is a few MB rather than tens
-- (every command's open reads the whole database once, PRAGMA quick_check). Each processor of the census is in
-- exactly one group of each instantiation: kept by the writer (db/census.cpp), which stores only a census
-- that parsed or was measured whole.
CREATE TABLE census_group (
  flavor TEXT NOT NULL,
  key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'name_absent', 'signature_mismatch', 'arch_absent',
                                         'target_unsupported', 'toolchain_crash', 'toolchain_timeout')),
  targets TEXT NOT NULL CHECK (length(targets) > 0 AND targets NOT GLOB '*[^a-z0-9,-]*'),  -- comma-separated
  detail TEXT NOT NULL CHECK (json_valid(detail)),
  PRIMARY KEY (flavor, key, targets),
  FOREIGN KEY (flavor, key) REFERENCES census_instantiation(flavor, key) ON DELETE CASCADE,
  CHECK ((status = 'ok') = (json_extract(detail, '$.evidence') IS NULL)),
  CHECK (status = 'ok' OR json_extract(detail, '$.lowered_to') IS NULL)
) WITHOUT ROWID;

CREATE TABLE census_not_probed (
  flavor TEXT NOT NULL REFERENCES census(flavor) ON DELETE CASCADE,
  intrinsic TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (length(reason) > 0),
  PRIMARY KEY (flavor, intrinsic)
) WITHOUT ROWID;

CREATE TABLE frontend (
  flavor TEXT PRIMARY KEY CHECK (flavor GLOB 'llvm[0-9]*'),
  provenance TEXT NOT NULL CHECK (json_valid(provenance)),
  source_digest TEXT
) WITHOUT ROWID;

CREATE TABLE frontend_key (
  flavor TEXT NOT NULL REFERENCES frontend(flavor) ON DELETE CASCADE,
  key TEXT NOT NULL,
  builtin TEXT,     -- NULL: the key has no builtin in this clang
  call TEXT,        -- the call posed, with the argument types clang asked for
  reason TEXT,      -- why there is no builtin, or why it could not be posed
  PRIMARY KEY (flavor, key),
  CHECK (builtin IS NOT NULL OR reason IS NOT NULL),
  CHECK ((call IS NULL) = (reason IS NOT NULL))
) WITHOUT ROWID;

CREATE TABLE frontend_cell (
  flavor TEXT NOT NULL,
  key TEXT NOT NULL,
  target TEXT NOT NULL CHECK (target GLOB 'gfx?*'),
  status TEXT NOT NULL CHECK (status IN ('accepted', 'rejected')),
  diagnostic TEXT,  -- rejected: clang's first error
  emitted TEXT,     -- accepted: the intrinsic calls clang emitted for the builtin (JSON array)
  PRIMARY KEY (flavor, key, target),
  FOREIGN KEY (flavor, key) REFERENCES frontend_key(flavor, key) ON DELETE CASCADE,
  CHECK ((status = 'rejected') = (diagnostic IS NOT NULL)),
  CHECK (emitted IS NULL OR json_valid(emitted))
) WITHOUT ROWID;
