// probe/encodings.cpp — see encodings.h.
#include "probe/encodings.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"
#include "probe/assemble.h"
#include "support/text.h"

namespace archdb {
namespace {

// An encoding family's suffix: tokens in lower case ("gfx12", "vi", "e64_dpp_gfx11"), where the opcode's own
// name is in upper case (S_BARRIER is no real of S_BARRIER_SIGNAL_IMM_gfx12).
bool encoding_suffix(const std::string& rest) {
  if (rest.empty()) return false;
  for (const std::string& token : split(rest, '_')) {
    if (token.empty()) return false;
    for (char c : token)
      if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

EncodingTable::EncodingTable() {
  initialize_amdgpu();
  const llvm::Target& target = amdgpu_target();
  const llvm::Triple& triple = amdgpu_triple();
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers(compat::create_register_info(target, triple));
  std::unique_ptr<llvm::MCAsmInfo> asm_info(compat::create_asm_info(target, *registers, triple, options));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target.createMCInstrInfo());
  std::unique_ptr<llvm::MCInstPrinter> printer(
      target.createMCInstPrinter(triple, asm_info->getAssemblerDialect(), *asm_info, *instructions, *registers));
  if (!printer) return;
  for (unsigned op = 0; op < instructions->getNumOpcodes(); ++op) {
    std::string mnemonic = compat::printed_mnemonic(*printer, op);
    if (!mnemonic.empty()) reals_.push_back({instructions->getName(op).str(), mnemonic});
  }
  std::sort(reals_.begin(), reals_.end());
}

EncodingTable::~EncodingTable() = default;

std::vector<std::string> EncodingTable::mnemonics_of(const std::string& opcode) const {
  std::vector<std::string> stems = {opcode};
  for (const char* encoding : {"_e64", "_e32"})
    if (opcode.size() > 4 && opcode.compare(opcode.size() - 4, 4, encoding) == 0) stems.push_back(opcode.substr(0, opcode.size() - 4));
  std::set<std::string> out;
  // An opcode that is a real instruction itself (an image instruction is selected in its encoding's form).
  auto self = std::lower_bound(reals_.begin(), reals_.end(), std::make_pair(opcode, std::string()));
  if (self != reals_.end() && self->first == opcode) out.insert(self->second);
  for (const std::string& stem : stems) {
    const std::string prefix = stem + "_";
    for (auto it = std::lower_bound(reals_.begin(), reals_.end(), std::make_pair(prefix, std::string()));
         it != reals_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      if (encoding_suffix(it->first.substr(prefix.size()))) out.insert(it->second);
  }
  return {out.begin(), out.end()};
}

const std::string& EncodingCheck::refusal(const std::string& mnemonic) {
  auto it = refusals_.find(mnemonic);
  if (it != refusals_.end()) return it->second;
  std::string refused;
  for (const std::string& error : assembler_.assemble("\t" + mnemonic + "\n").errors) {
    // "instruction not supported on this GPU" (LLVM 23 adds the processor and the line); a mnemonic only the
    // other wave size has says so too.
    for (const char* words : {"instruction not supported on this GPU", "instruction requires wavesize="}) {
      size_t at = error.find(words);
      if (at == std::string::npos) continue;
      size_t cut = error.find(": ", at);
      refused = error.substr(at, cut == std::string::npos ? std::string::npos : cut - at);
      break;
    }
    if (!refused.empty()) break;
  }
  return refusals_.emplace(mnemonic, refused).first->second;
}

std::optional<MissingEncoding> EncodingCheck::missing(const std::string& opcode) {
  std::vector<std::string> mnemonics = table_.mnemonics_of(opcode);
  if (mnemonics.empty()) return std::nullopt;
  std::string diagnostic;
  for (const std::string& m : mnemonics) {
    const std::string& refused = refusal(m);
    if (refused.empty()) return std::nullopt;  // this processor has it (or the assembler does not say)
    if (diagnostic.empty()) diagnostic = refused;
  }
  return MissingEncoding{opcode, join(mnemonics, ", "), diagnostic};
}

}  // namespace archdb
