// probe/classify.h — from what LLVM said to a status and one line of evidence. Evidence never carries a path
// of the machine that measured it, and is deterministic for the same toolchain.
#pragma once

#include <string>

#include "db/column.h"

namespace archdb {

// A fatal error (report_fatal_error) that is LLVM refusing to lower something is an answer (arch_absent);
// any other fatal error is LLVM failing (toolchain_crash).
bool is_lowering_refusal(const std::string& message);

// First line, machine paths reduced to file names, non-printable bytes replaced, bounded length.
std::string clean_evidence(const std::string& text);

// The evidence with every immediate ("<0>", "<-1>") masked, to compare refusals across immarg values.
std::string mask_immediates(const std::string& evidence);

}  // namespace archdb
