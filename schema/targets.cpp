// schema/targets.cpp — parser for schema/targets.txt: one processor name a line, '#' comments.
#include "schema/targets.h"

#include <algorithm>

#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb {

bool TargetList::contains(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_valid_target_name(const std::string& name) {
  if (name.size() < 4 || name.rfind("gfx", 0) != 0) return false;
  size_t colon = name.find(':');
  auto processor_char = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-'; };
  if (!std::all_of(name.begin() + 3, colon == std::string::npos ? name.end() : name.begin() + colon, processor_char))
    return false;
  if (colon == std::string::npos) return true;
  // Features: "+name" or "-name", comma-separated, each a name of lower-case letters, digits, '-', '_' and '.'.
  std::string features = name.substr(colon + 1) + ",";
  std::string feature;
  for (char c : features) {
    if (c != ',') {
      feature += c;
      continue;
    }
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-')) return false;
    if (!std::all_of(feature.begin() + 1, feature.end(), [&](char f) { return processor_char(f) || f == '_' || f == '.'; }))
      return false;
    feature.clear();
  }
  return true;
}

std::string target_processor(const std::string& target) { return target.substr(0, target.find(':')); }

std::string target_features(const std::string& target) {
  size_t colon = target.find(':');
  return colon == std::string::npos ? "" : target.substr(colon + 1);
}

bool is_wave64_target(const std::string& target) {
  for (const std::string& feature : split(target_features(target), ','))
    if (feature == "+wavefrontsize64") return true;
  return false;
}

TargetList parse_targets(const std::string& text, const std::string& path) {
  TargetList list;
  list.path = path;
  size_t pos = 0;
  int lineno = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    size_t e = line.find_last_not_of(" \t\r");
    std::string name = line.substr(b, e - b + 1);
    std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (!is_valid_target_name(name)) throw input_error(where + "invalid target name '" + name + "'");
    if (list.contains(name)) throw input_error(where + "duplicate target '" + name + "'");
    list.names.push_back(name);
  }
  if (list.names.empty()) throw input_error(path + ": the target list is empty");
  return list;
}

TargetList load_targets(const std::string& path) { return parse_targets(read_file(path), path); }

}  // namespace archdb
