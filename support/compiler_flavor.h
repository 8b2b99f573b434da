// support/compiler_flavor.h — the flavor (llvm22) of a compiler from its own --version text: what the checker's
// --compiler, the service's compiler_version and the front-end axis's --clang are taken to be. No LLVM.
#pragma once

#include <optional>
#include <string>

namespace archdb {

// "clang version 22.1.8" / "LLVM version 22.1.8" in a compiler's --version text -> "llvm22".
std::optional<std::string> flavor_from_version_text(const std::string& text);
// Runs `compiler --version` (no shell) and derives the flavor; throws usage_error naming the compiler.
std::string flavor_of_compiler(const std::string& compiler);

}  // namespace archdb
