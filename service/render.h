// service/render.h — the service's JSON: cells, flavors, targets, and the error body. Cell fields are
// the data contract's (cell_to_json), so a cell reads the same in data/, in `archdb query --json` and here.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "service/snapshot.h"

namespace archdb::service {

// The error body every 4xx/5xx carries: {"status": 404, "error": "Not Found", "message": "..."}.
std::string error_body(int status, const std::string& message);
std::string_view reason_phrase(int status);

// A cell with its flavor: {"flavor", "origin", "answer", then the data contract's fields}.
nlohmann::ordered_json cell_json(const FlavorData& flavor, const Cell& cell);
// A column's summary and provenance (column.json parsed; the run that measured it, if known).
nlohmann::ordered_json flavor_json(const FlavorData& flavor);

// The target family a processor belongs to, by its major version: gfx90a -> gfx9, gfx1151 -> gfx11,
// gfx11-generic -> gfx11, gfx1250 -> gfx12.
std::string target_family(const std::string& target);

}  // namespace archdb::service
