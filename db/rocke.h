// db/rocke.h — rocKE's arch-domain column format (schema "rocke.intrinsic_arch_domain/v1"): a peer's
// measurements, read as an imported column (kept apart from ours, never taken for measured), and ours
// written in that format for rocKE to read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/column.h"

namespace archdb {

struct RockeColumn {
  std::string flavor;           // toolchain.flavor
  nlohmann::json toolchain;     // as the file gives it
  std::vector<std::string> arches;
  std::vector<Cell> cells;      // sorted by key then target
};

constexpr const char* kRockeSchema = "rocke.intrinsic_arch_domain/v1";
constexpr const char* kRockeFormat = "rocke-v1";

// Validates the whole file; throws input_error naming `label`, the field and the reason (wrong schema, a
// field of the wrong JSON type, a cell verified on another flavor than the file says, a clang of another
// major version than the label, an unknown status, a missing, repeated or unknown arch...). An arch must
// satisfy `known_target` where one is given (the CLI: a wired target or a processor the linked LLVM knows).
RockeColumn parse_rocke(const std::string& text, const std::string& label,
                        const std::function<bool(const std::string&)>& known_target = {});

// The LLVM major version a compiler's version string names ("AMD clang version 22.0.0git ..." -> 22,
// "Debian LLVM version 22.1.8" -> 22), if it names one.
std::optional<int> clang_major(const std::string& clang);
// A measured column in that format, keys and arches sorted, every cell of the column (select first what the
// file is to hold). As rocKE's generator writes it: statuses in rocKE's taxonomy (rocke_status), the posing
// generation archdb's posing satisfies (rocke_generation) with archdb's own generator in a field of its own,
// `probe_cflags` as the rocKE flags the in-process probe is equivalent to, `canonical` as rocKE's `opt -S`
// would print it back. What the format has no field for rides in fields rocKE's reader ignores (archdb_*).
std::string render_rocke(const Column& column);

// rocKE's taxonomy has every archdb status but signature_mismatch: a declaration LLVM refuses as written is,
// to rocKE's generator, one `opt` does not resolve, which it records as name_absent. probe_error is never
// stored, so never exported (an internal error).
std::string_view rocke_status(Status status);

// The rocKE posing generation (rocKE's tools/gen_arch_domain.py, GENERATOR) a column's posing satisfies:
// 1 probes at any level; 2 at -O0 with a per-probe timeout; 3 also sweeps the immarg values 1, 2, 4, 12, 16
// on a refusal and records the value that lowered; 4 also understands LLVM 23's diagnostics ("intrinsic not
// supported on subtarget" is arch_absent) and sweeps on the verifier's refusals, which archdb's probe has
// done from its first generator.
int rocke_generation(const Provenance& provenance);

// The name an imported column gets beside the measured ones: "rocke-v1:llvm22".
std::string imported_name(const std::string& format, const std::string& flavor);

}  // namespace archdb
