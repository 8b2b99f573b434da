// probe/classify.cpp — see classify.h.
#include "probe/classify.h"

#include <cctype>

namespace archdb {

bool is_lowering_refusal(const std::string& m) {
  static const char* const kRefusals[] = {
      "Cannot select",        "not supported",         "unsupported",     "Unsupported",
      "Do not know how to",   "no libcall available",  "requires target feature",
      "Cannot lower",         "cannot be lowered",     "not legal",
  };
  for (const char* r : kRefusals)
    if (m.find(r) != std::string::npos) return true;
  return false;
}

std::string clean_evidence(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  // "In function: p12" and similar name our synthetic kernels, not the answer.
  for (const char* tail : {" In function: ", "In function: "}) {
    size_t at = line.find(tail);
    if (at != std::string::npos) line.resize(at);
  }
  // Release builds of LLVM dump SelectionDAG nodes by heap address ("0x55939a6a9750: f32 = ..."), which
  // differ from run to run: an address becomes "_" and a node's own address prefix is dropped.
  {
    std::string no_addresses;
    size_t j = 0;
    while (j < line.size()) {
      bool hex = line.compare(j, 2, "0x") == 0 && (j == 0 || !std::isalnum(static_cast<unsigned char>(line[j - 1])));
      size_t k = j + 2;
      while (hex && k < line.size() && std::isxdigit(static_cast<unsigned char>(line[k]))) ++k;
      if (hex && k - j >= 8) {
        if (line.compare(k, 2, ": ") == 0) k += 2;  // "0x...: " names the node itself
        else no_addresses += "_";
        j = k;
        continue;
      }
      no_addresses += line[j++];
    }
    line = no_addresses;
  }
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    // A path: '/' starting a token, with at least one more '/': keep only its last component.
    bool token_start = i == 0 || line[i - 1] == ' ' || line[i - 1] == '(' || line[i - 1] == '\'' || line[i - 1] == '"';
    if (line[i] == '/' && token_start) {
      size_t end = line.find_first_of(" :)'\"", i);
      if (end == std::string::npos) end = line.size();
      std::string path = line.substr(i, end - i);
      size_t last = path.rfind('/');
      if (last != 0) {
        out += path.substr(last + 1);
        i = end;
        continue;
      }
    }
    unsigned char c = static_cast<unsigned char>(line[i]);
    out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
    ++i;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '.' || out.back() == ':')) out.pop_back();
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

std::string mask_immediates(const std::string& evidence) {
  std::string out;
  for (size_t i = 0; i < evidence.size(); ++i) {
    if (evidence[i] == '<') {
      size_t j = i + 1;
      if (j < evidence.size() && evidence[j] == '-') ++j;
      size_t digits = j;
      while (j < evidence.size() && std::isdigit(static_cast<unsigned char>(evidence[j]))) ++j;
      if (j > digits && j < evidence.size() && evidence[j] == '>') {
        out += "<#>";
        i = j;
        continue;
      }
    }
    out += evidence[i];
  }
  return out;
}

}  // namespace archdb
