// db/column_files.cpp — reading, validating and writing data/<flavor>/ (see column_files.h).
#include "db/column_files.h"

#include <set>
#include <stdexcept>

#include "support/error.h"
#include "support/files.h"
#include "support/json_depth.h"

namespace archdb {
namespace fs = std::filesystem;

namespace {
constexpr auto kReplaceInvalid = nlohmann::json::error_handler_t::replace;
}

std::string render_column_json(const Column& column) {
  return provenance_to_json(column.provenance).dump(2, ' ', false, kReplaceInvalid) + "\n";
}

std::string render_cells_jsonl(const Column& column) {
  std::string out;
  for (const auto& c : column.cells) out += cell_to_json(c).dump(-1, ' ', false, kReplaceInvalid) + "\n";
  return out;
}

Column parse_column(const std::string& column_json, const std::string& cells_jsonl, const std::string& dir_label) {
  const std::string cj = dir_label + "/column.json";
  const std::string cl = dir_label + "/cells.jsonl";
  Column column;
  check_json_depth(column_json, cj);
  try {
    column.provenance = provenance_from_json(nlohmann::json::parse(column_json));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double's (1e400)
    throw input_error(cj + ": invalid JSON: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw input_error(cj + ": " + e.what());
  }
  std::string folder = fs::path(dir_label).filename().string();
  if (column.provenance.flavor != folder)
    throw input_error(cj + ": provenance names flavor '" + column.provenance.flavor + "' but the folder is '" +
                      folder + "'");
  if (!column.provenance.measured) {
    if (!cells_jsonl.empty()) throw input_error(cl + ": a descriptor (column.json says measured: false) has no cells");
    return column;
  }
  std::set<std::string> targets(column.provenance.targets.begin(), column.provenance.targets.end());
  size_t pos = 0;
  int lineno = 0;
  const Cell* prev = nullptr;
  while (pos < cells_jsonl.size()) {
    size_t nl = cells_jsonl.find('\n', pos);
    ++lineno;
    std::string where = cl + ":" + std::to_string(lineno) + ": ";
    if (nl == std::string::npos) throw input_error(where + "last line is not terminated by a newline");
    if (nl - pos > kMaxLineBytes) throw input_error(where + line_too_long(nl - pos));
    std::string line = cells_jsonl.substr(pos, nl - pos);
    pos = nl + 1;
    Cell cell;
    check_json_depth(line, cl + ":" + std::to_string(lineno));
    try {
      cell = cell_from_json(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double's (1e400)
      throw input_error(where + "invalid JSON: " + e.what());
    } catch (const std::invalid_argument& e) {
      throw input_error(where + e.what());
    }
    if (!targets.count(cell.target))
      throw input_error(where + "target '" + cell.target + "' is not in column.json's target list");
    if (prev) {
      if (prev->key == cell.key && prev->target == cell.target)
        throw input_error(where + "duplicate cell " + cell.key + "/" + cell.target);
      bool ordered = prev->key != cell.key ? prev->key < cell.key : prev->target < cell.target;
      if (!ordered) throw input_error(where + "cells are not sorted by key then target at " + cell.key + "/" + cell.target);
    }
    column.cells.push_back(std::move(cell));
    prev = &column.cells.back();
  }
  Provenance stated = column.provenance;
  column.recount();
  if (stated.counts != column.provenance.counts || stated.keys != column.provenance.keys)
    throw input_error(cj + ": counts and keys disagree with cells.jsonl (" + std::to_string(column.cells.size()) +
                      " cells of " + std::to_string(column.provenance.keys) + " keys)");
  return column;
}

Column read_column_dir(const fs::path& dir) {
  std::string label = dir.lexically_normal().string();
  if (!label.empty() && label.back() == '/') label.pop_back();
  std::error_code ec;
  std::string cells = fs::exists(dir / "cells.jsonl", ec) ? read_file(dir / "cells.jsonl") : "";
  Column column = parse_column(read_file(dir / "column.json"), cells, label);
  if (column.provenance.measured && !fs::exists(dir / "cells.jsonl", ec))
    throw input_error(label + "/cells.jsonl: missing (only a descriptor, measured: false, has no cells)");
  return column;
}

void write_column_dir(const fs::path& data_root, const Column& column) {
  fs::create_directories(data_root);
  fs::path target = data_root / column.provenance.flavor;
  recover_directory(target);
  fs::path staged = staging_dir_for(target);
  fs::remove_all(staged);
  try {
    fs::create_directories(staged);
    write_file_atomically(staged / "column.json", render_column_json(column));
    if (column.provenance.measured) write_file_atomically(staged / "cells.jsonl", render_cells_jsonl(column));
    // What else the folder holds (the census, the front end, the findings report) stays with the new column.
    std::error_code ec;
    if (fs::is_directory(target, ec)) {
      for (const auto& e : fs::directory_iterator(target, ec)) {
        std::string name = e.path().filename().string();
        if (name.empty() || name[0] == '.' || name == "column.json" || name == "cells.jsonl" || !e.is_regular_file()) continue;
        write_file_atomically(staged / name, read_file(e.path()));
      }
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staged, ec);  // a full disk: give back what was staged; the committed folder is untouched
    throw;
  }
  replace_directory(staged, target);
}

std::vector<std::string> list_column_dirs(const fs::path& data_root) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(data_root, ec)) return out;
  for (const auto& e : fs::directory_iterator(data_root)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (e.is_directory() && fs::exists(e.path() / "column.json")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
std::string digest_of(const std::string& column_json, const std::string& cells_jsonl) {
  return digest_hex("column.json\n" + column_json + "\ncells.jsonl\n" + cells_jsonl + "\n");
}
std::string read_if_present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) ? read_file(p) : "";
}
}  // namespace

std::string column_dir_digest(const fs::path& dir) {
  return digest_of(read_if_present(dir / "column.json"), read_if_present(dir / "cells.jsonl"));
}

std::string column_digest(const Column& column) {
  return digest_of(render_column_json(column), render_cells_jsonl(column));
}

}  // namespace archdb
