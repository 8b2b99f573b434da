// tests/scripted_executor.h — an executor (probe/executor.h) that answers from a script instead of compiling:
// the measuring phases run against it without workers, and a test reads back every kernel it was handed and
// how. The only stand-in of the probe's tests; LLVM is still linked (the phases ask it which processors exist).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "probe/executor.h"

namespace archdb::testing {

class ScriptedExecutor : public Executor {
 public:
  using CompileScript = std::function<Attempt(const Kernel&, const CompileHow&)>;
  using ResolveScript = std::function<ResolveAttempt(const DeclSpec&)>;

  struct Compiled {
    Kernel kernel;
    CompileHow how;
    size_t call = 0;  // which compile() call handed it over
  };

  ScriptedExecutor(CompileScript compile, ResolveScript resolve)
      : compile_(std::move(compile)), resolve_(std::move(resolve)) {}

  int workers() const override { return 2; }

  std::string target_defect(const std::string& target) const override {
    auto it = defects.find(target);
    return it == defects.end() ? "" : it->second;
  }

  std::string mnemonic_refusal(const std::string& target, const std::string& mnemonic) override {
    auto it = refusals.find({target, mnemonic});
    return it == refusals.end() ? "" : it->second;
  }

  std::vector<std::vector<Attempt>> compile(std::vector<CompileRun> runs) override {
    std::vector<std::vector<Attempt>> out;
    for (CompileRun& run : runs) {
      out.emplace_back();
      for (Kernel& k : run.kernels) {
        out.back().push_back(compile_(k, run.how));
        compiled.push_back({std::move(k), run.how, calls});
      }
    }
    ++calls;
    return out;
  }

  std::vector<ResolveAttempt> resolve(const std::vector<DeclSpec>& specs, bool) override {
    std::vector<ResolveAttempt> out;
    for (const DeclSpec& spec : specs) out.push_back(resolve_(spec));
    return out;
  }

  // The kernels handed over named `function` on `target`, in order.
  std::vector<Compiled> of(const std::string& target, const std::string& function) const {
    std::vector<Compiled> out;
    for (const Compiled& c : compiled)
      if (c.kernel.target == target && c.kernel.function == function) out.push_back(c);
    return out;
  }

  std::vector<Compiled> compiled;
  size_t calls = 0;
  std::map<std::string, std::string> defects;  // target -> what its assembler rejects of every kernel
  std::map<std::pair<std::string, std::string>, std::string> refusals;  // (target, mnemonic) -> the assembler's words

 private:
  CompileScript compile_;
  ResolveScript resolve_;
};

}  // namespace archdb::testing
