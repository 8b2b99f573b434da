// support/text.h — splitting and joining the delimited lists archdb's text forms use.
#pragma once

#include <string>
#include <vector>

namespace archdb {

// "a,,b" split on ',' -> {"a", "", "b"}: every field, empty ones too ("" -> {""}).
std::vector<std::string> split(const std::string& s, char sep);
std::string join(const std::vector<std::string>& parts, const std::string& sep);

}  // namespace archdb
