// probe/asm_text.cpp — see asm_text.h.
#include "probe/asm_text.h"

#include <map>
#include <set>

namespace archdb {

std::vector<std::string> function_mnemonics(const std::string& text, const std::string& function) {
  std::vector<std::string> out;
  bool inside = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (!inside) {
      // The function's label: "name:" (possibly quoted, possibly followed by a comment).
      if (line.rfind(function + ":", 0) == 0 || line.rfind("\"" + function + "\":", 0) == 0) inside = true;
      continue;
    }
    if (line[0] == ';' || line[0] == '#') continue;
    if (line.rfind(".Lfunc_end", 0) == 0) break;
    if (line[0] == '.') {
      // The kernel descriptor sits in another section; the body resumes only after ".text".
      continue;
    }
    size_t end = line.find_first_of(" \t;");
    std::string word = line.substr(0, end);
    if (word.empty() || word.back() == ':') continue;  // a label
    out.push_back(word);
  }
  return out;
}

std::vector<std::string> lowered_mnemonics(const std::vector<std::string>& probe,
                                           const std::vector<std::string>& baseline) {
  std::map<std::string, int> excess;
  for (const auto& m : probe) ++excess[m];
  for (const auto& m : baseline) --excess[m];
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& m : probe)
    if (excess[m] > 0 && seen.insert(m).second) out.push_back(m);
  return out;
}

}  // namespace archdb
