// probe/resolve.h — the flavor axis: what the linked LLVM makes of a catalog declaration, asked of LLVM
// itself. Is the name an intrinsic here (or one LLVM auto-upgrades or remangles)? Do the declared types fit
// its signature? What is the probe kernel's shape? Runs inside a worker: LLVM may crash on odd input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probe/synth.h"
#include "schema/catalog.h"

namespace archdb {

struct Resolution {
  enum class Kind {
    kResolved,           // probe it on every target
    kNameAbsent,         // not an intrinsic of this LLVM, nor one it upgrades
    kSignatureMismatch,  // the name exists; the declared types are not its signature
    kCatalogError,       // the entry itself is malformed (a type that does not parse, ...)
    kProbeError,         // we could not synthesise a valid probe: a defect of ours
  };
  Kind kind = Kind::kProbeError;
  std::string intrinsic;  // the name LLVM resolved (remangled or upgraded), or the declared name
  std::string evidence;
  std::string upgrade;    // how LLVM rewrote the declaration, when it did
  ProbeShape shape;       // kResolved
  int64_t default_imm = 0;  // the immediate the key is probed with: 0, unless LLVM's verifier refuses it
};

// `flavor_label` names this LLVM in evidence ("LLVM 22.1.8"); `immarg_sweep` are the immediates tried when
// the verifier refuses 0 for an immarg operand.
Resolution resolve_declaration(const DeclSpec& spec, const std::string& flavor_label,
                               const std::vector<int64_t>& immarg_sweep);

// A readable template of an intrinsic's signature from LLVM's own table, e.g.
// "anyfloat#0 (same#0, same#0, same#0)" or "<4 x float> (<4 x i16>, <4 x i16>, <4 x float>, i32 immarg, ...)".
// Empty if `name` is not an intrinsic.
std::string describe_intrinsic(const std::string& name);

}  // namespace archdb
