// probe/encodings.h — whether an instruction LLVM's code generator selected has an encoding on a processor,
// asked of LLVM's own tables rather than guessed: the real (encoded) instructions LLVM's instruction table lists
// for the selected opcode (AMDGPU names them <OPCODE>_<encoding family>: S_BARRIER_SIGNAL_IMM_gfx12,
// V_CVT_SCALEF32_PK_F32_FP8_vi), their mnemonics (the instruction printer's table), and whether the processor's
// assembler has such a mnemonic at all (its matcher's feature table, which answers a bare mnemonic with
// "instruction not supported on this GPU" where only other processors have it).
//
// Why: LLVM selects some instructions a processor has no encoding for, and then crashes asking their size
// (branch relaxation on gfx1030 for S_BARRIER_SIGNAL_IMM); the selection, read before the crash, is a refusal.
//
// Invariant: an opcode is said to lack an encoding only when LLVM's tables name at least one real instruction for
// it and the processor's assembler refuses every one of their mnemonics as another processor's; anything the
// tables do not settle (no real instruction, a mnemonic the assembler does not know) is no answer.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace archdb {

class Assembler;

struct MissingEncoding {
  std::string opcode;      // as LLVM's instruction table names it, "S_BARRIER_SIGNAL_IMM"
  std::string mnemonic;    // its real instructions' mnemonic(s), "s_barrier_signal"
  std::string diagnostic;  // the assembler's words, "instruction not supported on this GPU"
};

// The real instructions of every AMDGPU opcode and their mnemonics: the same for every processor, built once.
class EncodingTable {
 public:
  EncodingTable();
  ~EncodingTable();
  // The mnemonics of the real instructions LLVM lists for `opcode` (its own, where it is a real instruction; an
  // X_e64/X_e32 pseudo's are also those of X's reals, which some encodings name without the suffix); empty when
  // it lists none.
  std::vector<std::string> mnemonics_of(const std::string& opcode) const;

 private:
  std::vector<std::pair<std::string, std::string>> reals_;  // (name, mnemonic) of every printed opcode, by name
};

// One processor's view (its assembler), caching what it has asked.
class EncodingCheck {
 public:
  EncodingCheck(const EncodingTable& table, const Assembler& assembler) : table_(table), assembler_(assembler) {}
  // Set when LLVM's tables say `opcode` has no encoding on this processor (the invariant above).
  std::optional<MissingEncoding> missing(const std::string& opcode);
  // The assembler's refusal of a bare mnemonic as another processor's ("" when it has the mnemonic, or does
  // not know it at all).
  const std::string& refusal(const std::string& mnemonic);

 private:

  const EncodingTable& table_;
  const Assembler& assembler_;
  std::map<std::string, std::string> refusals_;
};

}  // namespace archdb
