// checker/checker.h — verdicts: may a kernel that uses these intrinsics (or catalog keys) be built for target
// T with the compiler of flavor F? Answers come only from measured columns; anything a column does not
// answer makes the verdict `unvalidated`, never `cleared` and never `refused`. No LLVM header here (ir_uses.h
// reads kernel IR, and says which intrinsic names belong to another target).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/ir_uses.h"
#include "db/census.h"
#include "db/column.h"
#include "db/frontend.h"
#include "db/store.h"
#include "schema/catalog.h"
#include "schema/targets.h"

namespace archdb {

enum class Verdict { kCleared, kRefused, kUnvalidated };
std::string_view verdict_name(Verdict v);

// One flavor's census (db/census.h) in memory, for the intrinsics outside the catalog: per instantiation
// (the name a kernel's IR calls), its cells grouped as the census keeps them — the processors whose cells
// agree in everything but the processor share one cell — so ~77k cells cost ~10k. A snapshot read in one
// transaction.
struct CensusIndex {
  struct Group {
    Cell cell;                       // key, target, lowered_to (and intrinsic, when it is the key): empty
    std::string lowered_to;          // the mnemonics, each ended by '\n': one string rather than a vector
    std::vector<uint16_t> targets;   // indices into `processors`, sorted
  };
  std::string flavor;
  std::string source_digest;             // the census's, as stored (empty: unknown)
  std::vector<std::string> processors;   // sorted
  std::map<std::string, std::vector<Group>, std::less<>> by_name;
  std::set<std::string, std::less<>> intrinsics;  // every llvm.amdgcn.* intrinsic of the flavor (base names)
  std::map<std::string, std::vector<std::string>, std::less<>> instantiations_of;  // intrinsic -> its rows, sorted
  size_t groups = 0;
  size_t cells = 0;  // cells stood for (groups x their processors)

  // Whether the flavor's LLVM has the intrinsic `name` is (or is an instantiation of).
  bool has_intrinsic_of(std::string_view name) const;
  // The census cell of instantiation `name` on `target`, if the census measured it.
  std::optional<Cell> find(std::string_view name, const std::string& target) const;
  // Reads in the caller's open transaction, or in one of its own (empty when the flavor has no census).
  // `previous` is returned instead when it is the same census (the same flavor and stored content digest):
  // a snapshot reloaded because a column changed keeps its census.
  static std::shared_ptr<const CensusIndex> load(const Store& store, const std::string& flavor,
                                                 std::shared_ptr<const CensusIndex> previous = nullptr);
};

// One column's cells, indexed for checking: a snapshot read in one transaction.
struct ColumnIndex {
  std::string flavor;
  bool has_cells = false;  // false: no column, or a descriptor without cells
  std::string why_no_cells;  // when !has_cells: said to the user
  std::map<std::string, std::vector<std::string>> keys_by_intrinsic;  // resolved intrinsic -> catalog keys
  std::map<std::pair<std::string, std::string>, Cell> cells;          // (key, target) -> cell
  // The census answers for intrinsics outside the catalog (item source "census"): from `census` when it is
  // in memory (the service's snapshots), else looked up in `census_store` on demand (the command line).
  std::shared_ptr<const CensusIndex> census;
  const Store* census_store = nullptr;
  // The processors the flavor's census covers (every one its LLVM knows), sorted; empty without a census. A
  // target outside the wired list is checked against the census alone when it is one of them.
  std::vector<std::string> census_processors;
  // The cells measured on demand by earlier checks: held here (the service's snapshots), else looked up in
  // census_store (the command line).
  std::shared_ptr<const OnDemandCells> on_demand;
  // The front-end axis (db/frontend.h): whether the flavor's clang accepts each catalog key's builtin on each
  // processor; null where it was not measured. It answers first for calls made through clang (a manifest's keys, whose
  // source is HIP; a builtin named as a key): a builtin clang refuses never reaches the back end.
  std::shared_ptr<const Frontend> frontend;

  // Reads in the caller's open transaction, or in one of its own: never a mix of two versions of a column.
  // Sets census_store to `store` (the census is looked up on demand).
  static ColumnIndex load(const Store& store, const std::string& flavor);
};

// A builtin the flavor's clang refused for the target when it compiled the kernel's HIP source (checker/hip_source.h).
struct BuiltinRefusal {
  std::string builtin;     // "__builtin_amdgcn_sdot4"
  std::string diagnostic;  // clang's words: "error: '__builtin_amdgcn_sdot4' needs target feature dot1-insts"
  bool unknown = false;    // clang has no such builtin (the name is absent from the front end)
};

// What to check. Exactly one of `keys`, or the intrinsics and calls, is normally filled.
struct CheckRequest {
  std::string subject;                          // the kernel (variant) name, for messages; may be empty
  std::string target;
  std::string flavor;
  std::vector<std::string> keys;                // catalog keys (--keys, a manifest)
  // A kernel's llvm.amdgcn.* calls, each posed as it calls it (ir_uses.h): each is answered only by a cell
  // posed as that call (posing_difference), else measured so, else a non-answer naming the difference.
  std::vector<IrCall> calls;
  std::vector<std::string> intrinsics;          // other target intrinsics an IR module calls, or names asked
  std::vector<std::string> generic_intrinsics;  // target-independent ones (llvm.memcpy...): listed, not gated
  std::vector<std::string> declared_only;       // target intrinsics declared and never called: listed, not gated
  std::map<std::string, std::string> declarations;  // intrinsic -> its declaration in the IR (ir_uses.h)
  // Features the kernel is compiled with beyond its processor's own (IrUses::added_features): the columns were
  // not measured with them, so no cell answers for such a kernel (each use becomes a non-answer saying so).
  std::vector<std::string> added_features;
  // The keys are called through clang (a kernel manifest, whose source is HIP): a key whose builtin the flavor's clang
  // refuses on the target (the front-end axis) is refused before any back-end cell is asked.
  bool through_frontend = false;
  // The builtins clang refused compiling the kernel's HIP source for the target: each a refused item.
  std::vector<BuiltinRefusal> refused_builtins;
  // Said with the answer (e.g. that the front end's committed answers stood in for an absent clang).
  std::vector<std::string> notes;
};

// Measures an instantiation no census measured, in isolated workers, and keeps the cell (checker/ links no
// LLVM: the command line hands the checker one when its build links the flavor's LLVM).
class OnDemandMeasurer {
 public:
  virtual ~OnDemandMeasurer() = default;
  virtual bool measures(const std::string& flavor) const = 0;
  // The cell of `instantiation`, declared as `declaration`, on `target`: the call posed as `call`, or (nullopt)
  // the census's way (every fair posing); nullopt when it could not be measured.
  virtual std::optional<Cell> measure(const std::string& flavor, const std::string& instantiation,
                                      const std::string& declaration, const std::string& target,
                                      const std::optional<CallPosing>& call) = 0;
};

struct CheckItem {
  std::string intrinsic;  // as the IR names it (or the cell's resolved intrinsic, for a key)
  std::string key;        // the catalog key that answered; empty if none
  std::string status;     // a status name, or "no_answer" when no cell answers
  std::string evidence;   // the cell's evidence, or why there is no answer
  std::vector<std::string> lowered_to;
  std::optional<CallPosing> call;   // the call as the kernel poses it (a kernel's IR)
  std::optional<CallPosing> posed;  // the call the answering cell was posed as
  std::string note;       // ok: e.g. "the call became no instruction"
  std::string source;     // "measured", "census", "on_demand", "frontend" (clang's answer), "llvm" (LLVM's intrinsic
                          // table: another target's), or "none"
  Verdict verdict = Verdict::kUnvalidated;
};

// Whether a cell answers a call posed as `call` (docs/checker.md "The checker"): nullopt when it does, else the difference,
// for people. A refusal holds for every posing (every fair way of posing the call was refused); a cell that lowered
// holds for the same immediates, with its result used for a call that ignores it too (the returning form serves
// it) and with divergent operands for uniform ones too (LLVM moves a uniform value into a vector register wherever
// one is needed), never the reverse; a non-answer holds only for its own posing (another may be answered).
std::optional<std::string> posing_difference(const Cell& cell, const CallPosing& call);

struct CheckResult {
  std::string subject, target, flavor;
  Verdict verdict = Verdict::kUnvalidated;
  std::vector<CheckItem> items;               // one per key / intrinsic, in request order
  std::vector<std::string> generic_intrinsics;
  std::vector<std::string> added_features;  // as the request gave them
  std::vector<std::string> declared_only;
  std::vector<std::string> notes;           // as the request gave them
  // A manifest checked against compiled IR (manifest_drift): each intrinsic the IR uses that the manifest
  // does not list. Drift refuses the build whatever the items say.
  bool drift_checked = false;
  std::vector<std::string> drift;

  // Records the drift and makes the verdict refused when there is any.
  void apply_drift(std::vector<std::string> found);

  // One line a kernel author can act on, e.g. "refused: wgrad_dw7x7_bf16 on gfx1201 (llvm22):
  // mfma.f32.4x4x4bf16.1k is arch_absent — LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn...".
  std::string headline() const;
  nlohmann::ordered_json to_json() const;
};

class Checker {
 public:
  // The catalog and target list give the valid keys and targets; columns come from `store` per flavor.
  Checker(const Store& store, Catalog catalog, TargetList targets);

  // Throws usage_error for an unknown target (neither wired nor a processor of the flavor's census), an
  // invalid flavor name, or an unknown key. A processor only the census covers is answered from census cells. A well-formed
  // flavor without a measured column is not an error: the verdict is unvalidated ("no measured column").
  // A request with nothing gated (IR that calls no target intrinsic) is cleared.
  CheckResult check(const CheckRequest& request) const;
  // The same against a column the caller holds. It touches no store unless the column looks its census up
  // on demand (census_store, as ColumnIndex::load leaves it for the command line): the service's snapshots
  // hold their census in memory and no store, so there it never touches SQLite and may run on any thread.
  CheckResult check(const CheckRequest& request, const ColumnIndex& column) const;
  // An instantiation no census measured (of an intrinsic the flavor has) is answered by an earlier on-demand
  // cell of the store, else measured by `measurer` when it measures the flavor.
  void set_on_demand(OnDemandMeasurer* measurer) { measurer_ = measurer; }

  const Catalog& catalog() const { return catalog_; }
  const TargetList& targets() const { return targets_; }

 private:
  const Store& store_;
  OnDemandMeasurer* measurer_ = nullptr;
  Catalog catalog_;
  TargetList targets_;
};

// What a kernel's IR asks a check, for the command line and the service alike: its llvm.amdgcn.* calls, each as it
// poses it; the other target intrinsics it calls, by name; the rest listed, not gated.
void add_ir_uses(CheckRequest& request, const IrUses& uses);

// The drift a stale manifest causes: each target intrinsic of compiled IR that no key the manifest lists
// stands for (per the column's resolved names, else the catalog's plain intrinsic names), as a message.
std::vector<std::string> manifest_drift(const std::vector<std::string>& ir_intrinsics,
                                        const std::vector<std::string>& manifest_keys, const ColumnIndex& column,
                                        const Catalog& catalog);

}  // namespace archdb
