// probe/decide.h — from what the workers reported to a cell: pure functions of typed attempts and their
// outcomes (outcome.h), without LLVM and without processes, so every rule of the taxonomy is unit-tested with
// made-up reports (tests/outcome_test.cpp).
//
// Invariants: a cell is ok only when its probe (or the sweep value that lowered) reported no refusal, no error
// diagnostic and no undefined symbol, its baseline compiled, and, where the printed assembly did not
// re-assemble, the object codegen wrote itself was read; anything the probe failed to produce is probe_error.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/column.h"
#include "probe/executor.h"
#include "probe/job.h"
#include "probe/outcome.h"
#include "probe/resolve.h"
#include "probe/synth.h"

namespace archdb {

// Everything the probe learnt about one (key, target).
struct CellInputs {
  std::string key;
  std::string target;
  std::string declared_name;           // the name the entry declares (the cell's intrinsic when LLVM resolved none)
  std::optional<WorkerEnd> resolve_death;  // LLVM died reading the declaration
  Resolution resolution;               // what LLVM made of it otherwise
  bool target_known = true;            // this LLVM knows the processor
  std::string flavor_label;            // "LLVM 22.1.8", for evidence
  int timeout_s = kDefaultTimeoutS;
  const Attempt* probe = nullptr;      // the probe kernel, posed the default way
  const Attempt* baseline = nullptr;   // its baseline kernel
  Posing default_posing;               // how the probe kernel posed the call
  std::vector<Posing> tried;           // the other posings tried, in order
  std::optional<Posing> solution;      // the one that decided the cell (lowered, or made the instruction appear) ...
  const Attempt* solution_attempt = nullptr;   // ... its kernel
  const Attempt* solution_baseline = nullptr;  // ... and that kernel's baseline
  const Attempt* object = nullptr;     // the object of the kernel that lowered, where its assembly was rejected
  // Where LLVM crashed after selecting the call: that kernel, and its baseline, compiled up to the end of
  // instruction selection (what LLVM selected, and which of it has no encoding on the processor).
  const Attempt* selection = nullptr;
  const Attempt* baseline_selection = nullptr;
  // The processor's assembler rejects the code LLVM writes for any kernel (Executor::target_defect): a call that
  // lowers there is no answer.
  std::string target_defect;
  // What LLVM's intrinsic table declares of the intrinsic on this target, where it declares anything.
  std::optional<DeclaredSupport> declared;
};

Cell decide_cell(const CellInputs& in);

// Of what LLVM selected for a kernel and for its baseline (select-only reports), the first of the call's own
// opcodes that has no encoding on the processor; nullopt when every one has (or LLVM's tables do not say).
std::optional<MissingEncoding> unencodable_selection(const CompileReport& kernel, const CompileReport& baseline);
// The evidence of a call LLVM selects as an instruction the processor has no encoding for, then crashes on.
std::string unencodable_evidence(const MissingEncoding& missing, const Outcome& crash);

// A crash or hang LLVM's tables decide from the processors where the same call lowers. `cells` are one call's
// cells on every target measured; `undecided` says which of its crashes and hangs came before LLVM selected
// anything (no selection read). Where the call lowers, a mnemonic every lowering has (beyond moves, waits, nops
// and accumulator copies, which are the kernel's plumbing, not the call) is its instruction; when the target's
// assembler refuses one such mnemonic as another processor's (`refusal`: its words, "" where it has it or does
// not say), the cell becomes arch_absent, Cause::kInstructionAbsent, naming it. Nothing else changes: no
// lowering anywhere, or every instruction of it known here, leaves the crash or hang as it is.
using MnemonicRefusal = std::function<std::string(const std::string& target, const std::string& mnemonic)>;
void decide_from_lowerings(const std::vector<Cell*>& cells, const std::function<bool(const Cell&)>& undecided,
                           const MnemonicRefusal& refusal);

// What was tried beyond the default posing, for a refusal's evidence: "immarg sweep 1, 2: none lowers" for
// posings that set every immediate alike, then the others counted by kind ("" when nothing was tried).
std::string tried_summary(const std::vector<Posing>& tried, const Posing& base);

// LLVM's assembler says the processor lacks an instruction the call became (LLVM 22: "instruction not
// supported on this GPU"; LLVM 23 adds the processor). One the baseline has too (a wait codegen inserts
// around any memory access, s_wait_xcnt for gfx1310 in LLVM 23) is not the call's: false.
bool names_missing_instruction(const std::vector<std::string>& mc_errors, const std::vector<std::string>& lowered_to);
// The mnemonic that message names (else the call's whole lowering).
std::string missing_instruction(const std::vector<std::string>& mc_errors, const std::vector<std::string>& lowered_to);
// That message without the instruction's text ("instruction not supported on this GPU (gfx90a)").
std::string missing_instruction_message(const std::vector<std::string>& mc_errors);
// The mnemonic of each rejected line the assembler says this processor lacks, in order ("" where the message
// quotes no line).
std::vector<std::string> missing_mnemonics(const std::vector<std::string>& mc_errors);

}  // namespace archdb
