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

struct Cell {
  std::string key;
  std::string target;
  Status status = Status::kProbeError;
  std::string intrinsic;                // the name LLVM resolved, or the declared name where absent
  std::string evidence;                 // every status but ok
  std::vector<std::string> lowered_to;  // ok: the mnemonics the call became
  std::optional<int64_t> imm;           // the immarg value that made it lower, when the sweep was needed
  std::string posing;                   // ok: how the call was posed when not the default way (probe/synth.h)
  std::string mc_check;                 // ok: the MC assembler's rejection of what codegen emitted, if any
  std::string note;                     // ok: e.g. that the call became no instruction

  bool operator==(const Cell& o) const;
  bool operator!=(const Cell& o) const { return !(*this == o); }
};

// The evidence of an arch_absent cell whose call codegen selected as an instruction the processor's own
// assembler rejects (README "ok means an instruction"): written by the probe's verdict, recognised by the
// findings (a back-end/assembler disagreement). One spelling for both.
std::string selects_rejected_instruction_evidence(const std::string& instruction, const std::string& message);
bool selects_rejected_instruction(const Cell& c);

// How a probe is posed unless told otherwise (README "How the probe measures"): the wall-clock budget of one
// kernel, and the immediates swept where the default one is refused. Defined here alone.
constexpr int kDefaultTimeoutS = 60;
inline const std::vector<int64_t> kDefaultImmargSweep = {1, 2, 4, 12, 16};

// How a column was made. Rendered as data/<flavor>/column.json; no timestamps, so regenerating an
// unchanged column is byte-identical.
struct Provenance {
  static constexpr const char* kSchema = "archdb.column/v1";
  static constexpr int kGeneratorVersion = 2;  // 2: the posings (README "How the probe measures")

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
