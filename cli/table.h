// cli/table.h — plain text tables for terminal output: columns padded to their widest cell.
#pragma once

#include <string>
#include <vector>

namespace archdb::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace archdb::cli
