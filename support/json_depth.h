// support/json_depth.h — how deeply a JSON text nests, counted without recursion, so that a reader can refuse a
// text before nlohmann's recursive routines (copies, dumps, comparisons) overflow the stack on it: a census
// detail of 100,000 nested arrays killed query, check, regen and serve with SIGSEGV.
//
// Invariant: every reader of JSON from outside the process (committed files, manifests, request bodies) passes
// its text through check_json_depth before parsing it; nothing archdb writes nests deeper than a few levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace archdb {

constexpr size_t kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside strings, escapes included, do not count);
// an unbalanced text counts what it opened.
size_t json_depth(std::string_view text);

// Throws input_error "WHAT: JSON nested N levels deep (at most 64 are read)" when `text` nests deeper than
// kMaxJsonDepth.
void check_json_depth(std::string_view text, const std::string& what);

}  // namespace archdb
