// db/column.h — the in-memory column: the cells one flavor's probe measured (or someone imported), with the
// provenance that says how. The canonical text form of a column is data/<flavor>/ (column_files.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace archdb {

// The status taxonomy (../README.md, "Statuses"). A non-answer is never a negative.
enum class Status {
  kOk,
  kNameAbsent,
  kSignatureMismatch,
  kArchAbsent,
  kTargetUnsupported,
  kToolchainCrash,
  kToolchainTimeout,
  kProbeError,  // a defect of the probe; never stored or committed
};

std::string_view status_name(Status s);
std::optional<Status> parse_status(std::string_view name);
const std::vector<Status>& storable_statuses();  // every status but probe_error, in taxonomy order
// Answers say yes or no; non-answers (unsupported target, crash, timeout) say nothing about the target.
bool is_answer(Status s);
// toolchain_crash or toolchain_timeout: asking LLVM failed (a measurement retries it; it is never evidence).
bool is_toolchain_failure(Status s);

// Why a cell that is not ok is what it is, as the probe knew it when it decided the cell: the evidence is its
// rendering for people; code that needs the kind switches over this, never reads the evidence.
enum class Cause {
  kNone,                 // ok, name_absent, signature_mismatch (the status says it all), or not known (imported)
  kRefusal,              // arch_absent: LLVM declined to lower (a fatal "Cannot select", "not supported"...)
  kDiagnostic,           // arch_absent: an error LLVM reported through its diagnostic handler
  kUndefinedSymbol,      // arch_absent: the call became a call of a symbol nothing defines
  kRejectedInstruction,  // arch_absent: LLVM selects an instruction its own assembler rejects for the processor
  kUnencodable,          // arch_absent: LLVM selects an instruction with no encoding there, then crashes
  kInstructionAbsent,    // arch_absent: LLVM crashes or hangs before selecting; where the call lowers it becomes an
                         // instruction with no encoding there
  kCrash,                // toolchain_crash: a signal (or out of memory)
  kFatalError,           // toolchain_crash: a fatal error that is not a refusal
  kWorkerEnded,          // toolchain_crash: the worker ended otherwise
  kDeclaration,          // toolchain_crash (or timeout): LLVM died reading the declaration itself
  kHang,                 // toolchain_timeout: a budget ran out
  kUnknownProcessor,     // target_unsupported: this LLVM does not know the processor
  kTargetDefect,         // target_unsupported: LLVM's assembler rejects the code it writes for any kernel there
};
std::string_view cause_name(Cause c);
std::optional<Cause> parse_cause(std::string_view name);
// Whether a cell of status `s` may have cause `c` (kNone fits every status; kDeclaration a crash or a timeout).
bool cause_fits(Cause c, Status s);

// The call a cell answers, as the probe posed it (docs/data.md "Data contract", `posed`): the value of each immarg
// operand, whether the operands a kernel's per-lane data would be were uniform or divergent (pointers and image
// descriptors are always passed uniform), whether the result was used. What does not apply to the intrinsic is
// absent. The instantiation is the cell's intrinsic, the target features its target's.
struct CallPosing {
  std::vector<int64_t> imm;         // one value per immarg operand, in order
  std::optional<bool> uniform;      // nullopt: no operand the probe makes divergent
  std::optional<bool> result_used;  // nullopt: no result

  bool operator==(const CallPosing& o) const {
    return imm == o.imm && uniform == o.uniform && result_used == o.result_used;
  }
  bool operator!=(const CallPosing& o) const { return !(*this == o); }
  bool empty() const { return imm.empty() && !uniform && !result_used; }
  // The value every immediate has, where there is at least one and all are alike.
  std::optional<int64_t> alike_immediate() const;
  // "immediates 0, 1; divergent operands; result used" (what applies), for people.
  std::string describe() const;
};
// The operands CallPosing::uniform speaks of, in a call of `callee` whose parameters have types `types` (IR
// syntax) and are immarg or not (`immarg`): those a kernel's per-lane data would be — integer and floating-point
// scalars and vectors that are not immarg — but not an image intrinsic's resource and sampler descriptors (the
// <8 x i32>/<4 x i32> operands its trailing immediates follow), which kernels pass uniform. One rule for the
// probe, which makes these divergent, and for the checker, which asks LLVM whether a kernel's are.
bool is_data_operand(const std::string& callee, const std::vector<std::string>& types, const std::vector<bool>& immarg,
                     size_t i);
nlohmann::ordered_json posing_to_json(const CallPosing& p);
// Throws a one-line reason for a malformed posing.
CallPosing posing_from_json(const nlohmann::json& j);

// What LLVM itself declares of an intrinsic on a target, beside what was measured (LLVM 23 on: the feature
// expression its intrinsic table requires, Intrinsic::getRequiredTargetFeatures), and whether the target
// satisfies it. Where the two disagree, LLVM's table or its code generator is wrong (the findings list them).
struct DeclaredSupport {
  std::string features;  // the expression LLVM declares: "gfx1250-insts", "a,b|c"
  bool holds = false;
  bool operator==(const DeclaredSupport& o) const { return features == o.features && holds == o.holds; }
  bool operator!=(const DeclaredSupport& o) const { return !(*this == o); }
};
// Its JSON form, {"requires": "<features>", "holds": true|false}: one encoder and one decoder for the column files and
// the database. The decoder throws a one-line reason for anything else.
nlohmann::ordered_json declared_to_json(const DeclaredSupport& d);
DeclaredSupport declared_from_json(const nlohmann::json& j);

struct Cell {
  std::string key;
  std::string target;
  Status status = Status::kProbeError;
  std::string intrinsic;                // the name LLVM resolved, or the declared name where absent
  std::string evidence;                 // every status but ok
  std::vector<std::string> lowered_to;  // ok: the mnemonics the call became
  std::optional<CallPosing> posed;      // the call the cell answers (never empty: nullopt when nothing was posed)
  std::string mc_check;                 // ok: the MC assembler's rejection of what codegen emitted, if any
  std::string note;                     // ok: e.g. that the call became no instruction
  Cause cause = Cause::kNone;           // why, as the probe knew it (every arch_absent, crash, timeout, unsupported)
  std::optional<DeclaredSupport> declared;  // what LLVM's intrinsic table declares, where it declares anything

  bool operator==(const Cell& o) const;
  bool operator!=(const Cell& o) const { return !(*this == o); }
};


// The kernel's plumbing around a call, the same on every processor: moves of operands and results, waits, nops,
// readfirstlane, accumulator copies ("s_nop", "s_waitcnt", "v_mov_b32_e32", "v_accvgpr_read_b32"...). What a call
// becomes beyond these is its own instruction(s).
bool is_plumbing_mnemonic(const std::string& mnemonic);

// How a probe is posed unless told otherwise (docs/measuring.md "How the probe measures"): the wall-clock budget of one
// kernel, and the immediates swept where the default one is refused. Defined here alone.
constexpr int kDefaultTimeoutS = 60;
inline const std::vector<int64_t> kDefaultImmargSweep = {1, 2, 4, 12, 16};

// How a column was made. Rendered as data/<flavor>/column.json; no timestamps, so regenerating an
// unchanged column is byte-identical.
struct Provenance {
  static constexpr const char* kSchema = "archdb.column/v1";
  // 2: the posings; 3: what LLVM selected before it crashed, judged by its tables (unencodable), every cell's
  // cause, retries in fresh workers (docs/measuring.md "How the probe measures")
  static constexpr int kGeneratorVersion = 3;

  std::string flavor;
  // A descriptor stands for a toolchain no host here has: it says which, and how to measure it there; it
  // has no cells (and no toolchain or probe fields) until someone does.
  bool measured = true;
  std::string stands_for;
  std::vector<std::string> how_to_measure;
  // Toolchain: what measured it.
  std::string llvm_version;   // "22.1.8"
  int llvm_major = 0;
  std::string identity;       // vendor line and build kind, e.g. "Debian LLVM version 22.1.8; Optimized build"
  std::string package;        // the distribution package version, where known ("1:22.1.8-1~deb12u1")
  bool prerelease = false;
  // Generator and how the probe was posed: a change here fails regen --check.
  int generator_version = kGeneratorVersion;
  std::string triple = "amdgcn-amd-amdhsa";
  std::string opt_level = "O0";
  int code_object_version = 6;
  int timeout_s = kDefaultTimeoutS;
  int retries = 1;
  std::vector<int64_t> immarg_sweep;
  std::vector<std::string> posings;  // the posings tried beyond the default, in order (generator 2 on)
  std::vector<std::string> targets;
  // Derived from the cells when rendered.
  std::map<std::string, int> counts;
  int keys = 0;

  nlohmann::ordered_json posing() const;  // the part regen --check compares
  bool operator==(const Provenance& o) const;
};

struct Column {
  Provenance provenance;
  std::vector<Cell> cells;  // sorted by (key, target), unique

  void sort();
  void recount();  // refreshes provenance.counts and .keys from the cells
  const Cell* find(const std::string& key, const std::string& target) const;
};

// Cell <-> JSON object with the data contract's field names and order.
nlohmann::ordered_json cell_to_json(const Cell& c);
// Throws a one-line reason (without location); callers add file and line.
Cell cell_from_json(const nlohmann::json& j);

nlohmann::ordered_json provenance_to_json(const Provenance& p);
Provenance provenance_from_json(const nlohmann::json& j);

}  // namespace archdb
