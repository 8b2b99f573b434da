// support/json_depth.cpp — see json_depth.h.
#include "support/json_depth.h"

#include "support/error.h"

namespace archdb {

size_t json_depth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void check_json_depth(std::string_view text, const std::string& what) {
  size_t depth = json_depth(text);
  if (depth > kMaxJsonDepth)
    throw input_error(what + ": JSON nested " + std::to_string(depth) + " levels deep (at most " +
                      std::to_string(kMaxJsonDepth) + " are read)");
}

}  // namespace archdb
