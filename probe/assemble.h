// probe/assemble.h — the MC cross-check: what codegen printed for a function, re-assembled by LLVM's MC
// assembler for the same processor into an ELF object, in process. Reports the assembler's rejections and
// the symbols the object leaves undefined.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace archdb {

// The symbols an ELF object references without defining, per function of an object that holds several: a
// relocation inside a function's bytes that names an undefined symbol is that function's. `unattributed`
// lists any undefined symbol no such relocation names (then only an object of one function tells whose it
// is). Lists are in symbol-table order.
struct UndefinedByFunction {
  std::map<std::string, std::vector<std::string>> by_function;  // every function of the object, even with none
  std::vector<std::string> unattributed;
  std::vector<std::string> all;  // of the whole object
};
UndefinedByFunction undefined_symbols_by_function(const std::string& object, std::string& error);

struct AssemblyResult {
  std::vector<std::string> errors;             // "instruction not supported on this GPU: v_..."
  UndefinedByFunction undefined;               // the symbols the object references without defining
  bool object_written = false;
};

class Assembler {
 public:
  // The MC tables are built once per processor (and the features it is measured with, LLVM's -mattr form).
  explicit Assembler(const std::string& cpu, const std::string& features = "");
  ~Assembler();
  AssemblyResult assemble(const std::string& text) const;

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

}  // namespace archdb
