// db/rocke.h — rocKE's arch-domain column format (schema "rocke.intrinsic_arch_domain/v1"): a peer's
// measurements, read as an imported column (kept apart from ours, never taken for measured), and ours
// written in that format for rocKE to read.
#pragma once

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

// Validates the whole file; throws input_error naming `label` and the reason (wrong schema, a cell verified
// on another flavor than the file says, an unknown status, a missing arch...).
RockeColumn parse_rocke(const std::string& text, const std::string& label);
// A measured column in that format, keys and arches sorted; evidence cut to what the format keeps.
std::string render_rocke(const Column& column);

// The name an imported column gets beside the measured ones: "rocke-v1:llvm22".
std::string imported_name(const std::string& format, const std::string& flavor);

}  // namespace archdb
