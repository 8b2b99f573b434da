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
// A measured column in that format, keys and arches sorted; evidence cut to what the format keeps.
std::string render_rocke(const Column& column);

// The name an imported column gets beside the measured ones: "rocke-v1:llvm22".
std::string imported_name(const std::string& format, const std::string& flavor);

}  // namespace archdb
