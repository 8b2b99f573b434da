// probe/asm_text.h — reading what codegen printed: a function's instruction mnemonics, and what a probe
// kernel emitted beyond its baseline.
#pragma once

#include <string>
#include <vector>

namespace archdb {

// The mnemonics of `function`'s instructions in assembly `text`, in order (labels, directives, comments and
// the kernel descriptor left out).
std::vector<std::string> function_mnemonics(const std::string& text, const std::string& function);

// The mnemonics `probe` has more of than `baseline` (a multiset difference), each once, in the order they
// first appear in `probe`.
std::vector<std::string> lowered_mnemonics(const std::vector<std::string>& probe,
                                           const std::vector<std::string>& baseline);

}  // namespace archdb
