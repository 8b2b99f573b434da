// db/census.h — the census: every llvm.amdgcn.* intrinsic of one LLVM on every AMDGPU processor it knows,
// measured by the same probe and with the same statuses as a catalog column (probe/census.h measures it).
// No LLVM here: the model, its committed text form data/<flavor>/census.txt, the full-cells export, and its
// tables in the store.
//
// The unit is an instantiation: a non-overloaded intrinsic as it is, an overloaded one with concrete
// overload types (its key is the mangled name LLVM gives it, e.g. "llvm.amdgcn.raw.buffer.load.f32"). An
// intrinsic that could not be instantiated is listed as not probed, with the reason, and has no cells: it
// is never given a status.
//
// census.txt, the committed form (byte-identical when regenerated from the same measurement):
//   # archdb census ...                     a title line
//   # schema: archdb.census/v1              provenance, one "# name: value" line each (values are JSON where
//   # flavor: llvm22                        they are not plain words)
//   ...
//   KEY<TAB>TYPES<TAB>GROUP<TAB>GROUP...    one line per instantiation, sorted by key
//   not_probed<TAB>INTRINSIC<TAB>REASON     one line per intrinsic not probed, sorted, after them
// TYPES is "-" or the overload types as a JSON array. A GROUP is "STATUS TARGETS DETAIL": the processors
// (comma-separated, sorted) whose cells agree in everything but the target, and the rest of their cell as
// a JSON object (evidence, lowered_to, imm, posing, mc_check, note; intrinsic where LLVM resolved another name).
// Groups are ordered by status (taxonomy order), then by their first processor. The form is lossless: the
// store loaded from it holds the same cells as the measurement that wrote it.
#pragma once

#include <filesystem>
#include <map>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/column.h"

namespace archdb {

class Store;

struct CensusInstantiation {
  std::string key;        // the mangled name posed ("llvm.amdgcn.raw.buffer.load.f32")
  std::string intrinsic;  // the intrinsic's base name ("llvm.amdgcn.raw.buffer.load")
  std::vector<std::string> overload_types;  // in LLVM's order; empty when not overloaded
};

struct CensusNotProbed {
  std::string intrinsic;
  std::string reason;
};

struct CensusProvenance {
  static constexpr const char* kSchema = "archdb.census/v1";
  std::string flavor;
  std::string llvm_version, identity, package;
  bool prerelease = false;
  int generator_version = Provenance::kGeneratorVersion;
  nlohmann::ordered_json probe;          // how it was posed (opt level, timeout, sweep, candidates, ...)
  std::vector<std::string> processors;   // every gfx processor this LLVM knows, sorted
  // Processors with a defect of LLVM's own (its assembler rejects the code it writes for any kernel there),
  // each with what it is: their cells that lower are target_unsupported (docs/measuring.md "How the probe measures").
  std::map<std::string, std::string> processor_notes;
  int intrinsics = 0;                    // llvm.amdgcn.* intrinsics enumerated
  // Derived from the rows when rendered.
  int instantiations = 0;
  int not_probed = 0;
  std::map<std::string, int> counts;
};

struct Census {
  CensusProvenance provenance;
  std::vector<CensusInstantiation> instantiations;  // sorted by key
  std::vector<Cell> cells;                          // sorted by (key, target); key = instantiation key
  std::vector<CensusNotProbed> not_probed;          // sorted by intrinsic

  void sort();
  void recount();
  const CensusInstantiation* instantiation(const std::string& key) const;
  const Cell* find(const std::string& key, const std::string& target) const;
};

// The committed text form (above). Parsing validates everything (every processor on every instantiation
// exactly once, no probe_error, sorted, counts agreeing) and names file and line on the first problem.
std::string render_census(const Census& census);
Census parse_census(const std::string& text, const std::string& label);
// The full cells, one JSON object a line (the data contract's cell fields plus "overload_types").
std::string render_census_jsonl(const Census& census);

constexpr const char* kCensusFile = "census.txt";
std::optional<Census> read_census_file(const std::filesystem::path& data_root, const std::string& flavor);
void write_census_file(const std::filesystem::path& data_root, const Census& census);

// ---- the store (tables of schema/migrations/0002_census.sql) ----

// Replaces the flavor's census in one transaction.
void store_census(Store& store, const Census& census, const std::string& source_digest);
std::optional<Census> load_census(const Store& store, const std::string& flavor);
std::vector<std::string> census_flavors(const Store& store);
// The census rows about one name: an instantiation key ("llvm.amdgcn.raw.buffer.load.f32"), an intrinsic's
// base name (all its instantiations), or either without the "llvm.amdgcn." prefix.
struct CensusMatch {
  std::vector<CensusInstantiation> instantiations;
  std::vector<Cell> cells;  // sorted by (key, target)
  std::optional<CensusNotProbed> not_probed;
};
CensusMatch find_census(const Store& store, const std::string& flavor, const std::string& name);
// The answer for an intrinsic's name on one processor over every instantiation the census measured of it (`cells`
// holds theirs): ok where any of them lowers (the first, in row order), a refusal only where every one was refused
// (the first refusal), else the first non-answer; its evidence names the instantiations weighed. nullopt: no cell
// of the processor.
std::optional<Cell> intrinsic_answer(const std::vector<CensusInstantiation>& instantiations, const std::vector<Cell>& cells,
                                     const std::string& target);
// intrinsic_answer on every processor `cells` cover (only those of `only_targets`, where it names any).
std::map<std::string, Cell> intrinsic_answers(const std::vector<CensusInstantiation>& instantiations,
                                              const std::vector<Cell>& cells,
                                              const std::vector<std::string>& only_targets = {});
// The instantiation a catalog key poses on processors without features (its cells' `intrinsic` there), which a
// census answers on processors the key's columns do not hold; nullopt where those cells pose none or disagree.
std::optional<std::string> plain_instantiation(const std::vector<const Cell*>& key_cells);
// `name` with the "llvm.amdgcn." prefix, added where it is left out ("cos" -> "llvm.amdgcn.cos").
std::string full_intrinsic_name(const std::string& name);
// One census cell by the instantiation's name (the intrinsic name a kernel's IR calls), looked up on demand.
std::optional<Cell> census_cell(const Store& store, const std::string& flavor, const std::string& name,
                                const std::string& target);
// Whether the flavor's census is stored and knows `name` as an intrinsic or an instantiation of one (its
// intrinsics are every llvm.amdgcn.* intrinsic of that LLVM, the not-probed ones included). nullopt: no census.
std::optional<bool> census_has_intrinsic_of(const Store& store, const std::string& flavor, const std::string& name);
// The intrinsic base names `name` may be an instantiation of: itself, then each shorter prefix ending before a '.'.
std::vector<std::string> intrinsic_base_candidates(const std::string& name);
// Cells measured on demand by a check (migration 0008): an instantiation the census did not measure, measured
// the census's way (`call` nullopt), or one call of an instantiation, posed exactly as the kernel calls it. A
// stored one replaces any earlier one of the same (flavor, key, target, call).
void store_on_demand_cell(Store& store, const std::string& flavor, const Cell& cell, const std::optional<CallPosing>& call,
                          const std::string& identity);
std::optional<Cell> on_demand_cell(const Store& store, const std::string& flavor, const std::string& key,
                                   const std::string& target, const std::optional<CallPosing>& call);
// Every on-demand cell of a flavor, for a snapshot that holds them in memory (the service): by (key, target, call).
struct OnDemandCells {
  std::map<std::tuple<std::string, std::string, std::string>, Cell> cells;
  const Cell* find(const std::string& key, const std::string& target, const std::optional<CallPosing>& call) const;
};
OnDemandCells load_on_demand_cells(const Store& store, const std::string& flavor);
// Loads data/<flavor>/census.txt for every committed flavor whose file changed (by digest); drops census
// rows whose file is gone.
void sync_census_from_data(Store& store, const std::filesystem::path& data_root);

}  // namespace archdb
