// db/column_files.h — the committed text form of a column, data/<flavor>/:
//   column.json  — provenance (Provenance), pretty-printed, no timestamps;
//   cells.jsonl  — one cell a line, sorted by key then target.
// Reading validates everything and names file and line on the first problem; writing replaces the whole
// folder in one step, so a crash leaves either the old column or the new one; the other files of the folder
// (census.txt, frontend.txt, findings.md: db/census.h, db/frontend.h) are carried over unchanged.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "db/column.h"

namespace archdb {

std::string render_column_json(const Column& column);
std::string render_cells_jsonl(const Column& column);

Column parse_column(const std::string& column_json, const std::string& cells_jsonl, const std::string& dir_label);
Column read_column_dir(const std::filesystem::path& dir);
// Writes data_root/<flavor>/ from `column` (which must be sorted and counted).
void write_column_dir(const std::filesystem::path& data_root, const Column& column);

// The flavors committed under data_root: subfolders holding a column.json, sorted.
std::vector<std::string> list_column_dirs(const std::filesystem::path& data_root);
// Digest of the folder's files as stored, for change detection; column_digest gives the same value for
// the files write_column_dir would write.
std::string column_dir_digest(const std::filesystem::path& dir);
std::string column_digest(const Column& column);

}  // namespace archdb
