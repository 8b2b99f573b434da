// probe/assemble.h — the MC cross-check: what codegen printed for a function, re-assembled by LLVM's MC
// assembler for the same processor into an ELF object, in process. Reports the assembler's rejections and
// the symbols the object leaves undefined.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace archdb {

struct AssemblyResult {
  std::vector<std::string> errors;             // "instruction not supported on this GPU: v_..."
  std::vector<std::string> undefined_symbols;  // referenced, never defined
  bool object_written = false;
};

// The symbols an ELF object references without defining.
std::vector<std::string> undefined_symbols(const std::string& object, std::string& error);

class Assembler {
 public:
  explicit Assembler(const std::string& cpu);  // the MC tables are built once per processor
  ~Assembler();
  AssemblyResult assemble(const std::string& text) const;

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

}  // namespace archdb
