// probe/executor.cpp — the executor of forked workers (see executor.h).
#include "probe/executor.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/PrettyStackTrace.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"
#include "probe/assemble.h"
#include "probe/decide.h"
#include "probe/encodings.h"
#include "probe/pool.h"
#include "probe/synth.h"
#include "probe/worker.h"
#include "schema/targets.h"
#include "support/cpus.h"
#include "support/error.h"

namespace archdb {
namespace {

// While alive, a fatal error LLVM reports in this (the parent) process unwinds the innermost
// CrashRecoveryContext instead of ending the process.
class ParentFatalErrors {
 public:
  ParentFatalErrors() {
    llvm::CrashRecoveryContext::Enable();
    llvm::install_fatal_error_handler(&ParentFatalErrors::handle);
  }
  ~ParentFatalErrors() { llvm::remove_fatal_error_handler(); }

 private:
  static void handle(void*, const char* reason, bool) {
    if (auto* recovery = llvm::CrashRecoveryContext::GetCurrent()) recovery->HandleExit(1);
    std::fprintf(stderr, "archdb: LLVM ERROR: %s\n", reason);
    std::_Exit(kExitInternal);
  }
};

// The kernel the executor's processes warm up with: it stores a value, as every probe kernel does.
constexpr const char* kWarmKernel =
    "define amdgpu_kernel void @warm(ptr addrspace(1) %out, <4 x float> %v) {\n"
    "  store volatile <4 x float> %v, ptr addrspace(1) %out\n  ret void\n}\n";

// Compiles the warm-up kernel once, so the subtarget the machine caches is built here, before the forks,
// instead of again in every worker; returns its assembly.
std::string warm_up(llvm::TargetMachine& machine) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diag;
  auto module = llvm::parseAssemblyString(kWarmKernel, diag, context);
  compat::set_target_triple(*module, amdgpu_triple());
  set_probe_module_flags(*module);
  module->setDataLayout(machine.createDataLayout());
  llvm::SmallString<0> sink;
  llvm::raw_svector_ostream os(sink);
  llvm::legacy::PassManager passes;
  if (!machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) passes.run(*module);
  return std::string(sink.data(), sink.size());
}

// What LLVM's assembler says of the code LLVM wrote for a kernel that only stores a value: a processor whose
// every kernel is rejected (LLVM 23 ends each of gfx1310's with s_wait_xcnt, which its assembler has not).
std::string defect_of(const std::string& assembly, const Assembler& assembler, const std::string& target) {
  const std::vector<std::string> errors = assembler.assemble(assembly).errors;
  const std::string words = missing_instruction_message(errors);
  if (words.empty()) return "";
  const std::string mnemonic = missing_mnemonics(errors).front();
  return "LLVM " + linked_toolchain().llvm_version + " writes " + (mnemonic.empty() ? "an instruction" : mnemonic) +
         " into every kernel for " + target + ", which its own assembler rejects there (" + words +
         "): no kernel can be built for it";
}

class PoolExecutor : public Executor {
 public:
  explicit PoolExecutor(const ExecutorOptions& options) : options_(options) {
    workers_ = options.jobs > 0 ? options.jobs : usable_cpus();
    const std::string label = "LLVM " + linked_toolchain().llvm_version;
    llvm::TargetOptions target_options;
    for (const auto& target : options.targets) {
      std::unique_ptr<llvm::TargetMachine> machine(
          compat::create_target_machine(amdgpu_target(), amdgpu_triple(), target_processor(target), target_options,
                                        llvm::CodeGenOptLevel::None, target_features(target)));
      if (!machine) throw internal_error("LLVM could not create a target machine for " + target);
      // Warming up is codegen in this process: LLVM failing at it must not end the run. A machine that
      // cannot warm up is still used; its workers then meet the same failure, per kernel.
      std::string assembly;
      {
        const void* stack = llvm::SavePrettyStackState();
        llvm::CrashRecoveryContext recovery;
        ParentFatalErrors guard;
        if (!recovery.RunSafely([&] { assembly = warm_up(*machine); })) llvm::RestorePrettyStackState(stack);
      }
      assemblers_[target] = std::make_unique<Assembler>(target_processor(target), target_features(target));
      if (!assembly.empty()) defects_[target] = defect_of(assembly, *assemblers_[target], target);
      resources_[target] = TargetResources{machine.get(), assemblers_[target].get(), &encodings_};
      machines_.push_back(std::move(machine));
    }
    // Forked now, while this process holds little but the target machines the workers need.
    auto zygote = std::make_shared<Zygote>([this, label](int in_fd, int out_fd) { run_worker(in_fd, out_fd, resources_, label); });
    pool_ = std::make_unique<WorkerPool>(workers_, zygote);
    serial_pool_ = std::make_unique<WorkerPool>(1, zygote);
    if (!options.targets.empty()) {
      // Retries run one at a time and most crash again, and a fresh worker takes several times as long to
      // warm up as a retry to run: while one runs, a spare warms up on each CPU the run may use.
      Job warm;
      warm.target = options.targets.front();
      warm.timeout_s = options.timeout_s;
      warm.items.push_back({-1, "warm", kWarmKernel, "", DeclSpec{}});
      serial_pool_->keep_warm_spares(std::move(warm), workers_);
    }
  }

  int workers() const override { return workers_; }

  std::string target_defect(const std::string& target) const override {
    auto it = defects_.find(target);
    return it == defects_.end() ? "" : it->second;
  }

  std::string mnemonic_refusal(const std::string& target, const std::string& mnemonic) override {
    auto assembler = assemblers_.find(target);
    if (assembler == assemblers_.end()) return "";
    std::unique_ptr<EncodingCheck>& check = encoding_checks_[target];
    if (!check) check = std::make_unique<EncodingCheck>(encodings_, *assembler->second);
    return check->refusal(mnemonic);
  }

  std::vector<std::vector<Attempt>> compile(std::vector<CompileRun> runs) override {
    // Every kernel of the call is an item: its run, its place there, and how its jobs are made.
    items_.clear();
    std::vector<std::vector<Attempt>> out(runs.size());
    planned_ = done_ = 0;
    std::vector<std::pair<WorkerPool*, std::vector<int>>> lanes;
    for (size_t r = 0; r < runs.size(); ++r) {
      out[r].resize(runs[r].kernels.size());
      std::vector<int> ids;
      for (size_t k = 0; k < runs[r].kernels.size(); ++k) {
        ids.push_back(static_cast<int>(items_.size()));
        items_.push_back({std::move(runs[r].kernels[k]), runs[r].how, &out[r][k]});
      }
      planned_ += static_cast<int>(ids.size());
      lanes.push_back({runs[r].how.serial ? serial_pool_.get() : pool_.get(), std::move(ids)});
    }
    for (auto& [pool, ids] : lanes) submit_in_batches(*pool, ids);
    Callbacks parallel(*this, *pool_), serial(*this, *serial_pool_);
    std::vector<std::pair<WorkerPool*, const WorkerPool::Callbacks*>> busy;
    if (serial_pool_->busy()) busy.push_back({serial_pool_.get(), &serial.callbacks});
    if (pool_->busy()) busy.push_back({pool_.get(), &parallel.callbacks});
    if (!busy.empty()) WorkerPool::run_together(busy);
    items_.clear();
    return out;
  }

  std::vector<ResolveAttempt> resolve(const std::vector<DeclSpec>& specs, bool serial) override {
    std::vector<ResolveAttempt> out(specs.size());
    std::vector<bool> reported(specs.size(), false);
    WorkerPool& pool = serial ? *serial_pool_ : *pool_;
    planned_ = static_cast<int>(specs.size());
    done_ = 0;
    auto submit = [&](const std::vector<int>& indices) {
      Job job;
      job.kind = Job::Kind::kResolve;
      job.retire_after = serial;  // a retry starts from the zygote's state
      job.timeout_s = options_.timeout_s;
      job.immarg_sweep = options_.immarg_sweep;
      for (int i : indices) {
        JobItem item;
        item.id = i;
        item.spec = specs[static_cast<size_t>(i)];
        job.items.push_back(item);
      }
      ++jobs_;
      pool.submit(std::move(job));
    };
    std::vector<int> all;
    for (size_t i = 0; i < specs.size(); ++i) all.push_back(static_cast<int>(i));
    if (serial) {
      for (int i : all) submit({i});
    } else {
      size_t workers = static_cast<size_t>(pool.workers());
      size_t per = (all.size() + workers - 1) / workers;
      for (size_t b = 0; b < all.size(); b += per)
        submit(std::vector<int>(all.begin() + static_cast<long>(b), all.begin() + static_cast<long>(std::min(all.size(), b + per))));
    }
    WorkerPool::Callbacks cb;
    cb.on_resolved = [&](const Job&, const ResolveReport& r) {
      size_t i = static_cast<size_t>(r.id);
      reported[i] = true;
      out[i] = ResolveAttempt{r.resolution, std::nullopt};
      ++done_;
    };
    cb.on_end = [&](const Job& job, const WorkerEnd& end) {
      if (end.completed()) return;
      ++worker_deaths_;
      // Declarations are resolved in order: the first unreported one is the one LLVM died on.
      std::vector<int> rest;
      for (const auto& item : job.items)
        if (!reported[static_cast<size_t>(item.id)]) rest.push_back(item.id);
      if (rest.empty()) return;
      out[static_cast<size_t>(rest.front())].death = end;
      ++done_;
      rest.erase(rest.begin());
      if (!rest.empty()) submit(rest);
    };
    cb.on_tick = [&] { tick(); };
    pool.run(cb);
    return out;
  }

 private:
  struct Item {
    Kernel kernel;
    CompileHow how;
    Attempt* attempt;
  };

  // The pool's callbacks for one compile call: every item ends with a report or a death attributed to it.
  struct Callbacks {
    Callbacks(PoolExecutor& e, WorkerPool& pool) {
      callbacks.on_compiled = [&e](const Job&, const CompileReport& r) {
        if (r.id < 0) return;
        Item& item = e.items_[static_cast<size_t>(r.id)];
        item.attempt->report = r;
        // Answered: never compiled again (only deaths are), so its text and declaration go; the census's
        // posings make tens of thousands of them.
        std::string().swap(item.kernel.ir);
        std::string().swap(item.kernel.declare_line);
        ++e.done_;
      };
      callbacks.on_end = [&e, &pool](const Job& job, const WorkerEnd& end) { e.on_compile_end(pool, job, end); };
      callbacks.on_tick = [&e] { e.tick(); };
    }
    WorkerPool::Callbacks callbacks;
  };

  void tick() {
    if (progress_) progress_(done_, planned_);
  }

  Attempt& attempt(int id) { return *items_[static_cast<size_t>(id)].attempt; }

  void submit_in_batches(WorkerPool& pool, const std::vector<int>& ids) {
    // Grouped by target in batches, targets interleaved so that every worker has work from the start.
    std::map<std::string, std::vector<int>> by_target;
    for (int id : ids) by_target[items_[static_cast<size_t>(id)].kernel.target].push_back(id);
    for (auto& [target, list] : by_target) {
      size_t batch = std::max<size_t>(1, items_[static_cast<size_t>(list.front())].how.batch);
      for (size_t b = 0; b < list.size(); b += batch)
        submit(pool, target, std::vector<int>(list.begin() + static_cast<long>(b),
                                              list.begin() + static_cast<long>(std::min(list.size(), b + batch))));
    }
  }

  void submit(WorkerPool& pool, const std::string& target, const std::vector<int>& ids) {
    const CompileHow& how = items_[static_cast<size_t>(ids.front())].how;
    Job job;
    job.kind = Job::Kind::kCompile;
    job.target = target;
    job.timeout_s = options_.timeout_s;
    job.cpu_budget_ms = how.retry ? options_.retry_cpu_budget_ms : options_.cpu_budget_ms;
    job.hang_function = how.retry && options_.hang_first_attempt_only ? "" : options_.hang_function;
    job.recover_refusals = !options_.strict_isolation;
    job.emit_object = how.emit_object;
    job.selection = how.selection;
    job.retire_after = how.fresh;
    for (int id : ids) {
      attempt(id) = Attempt{};
      const Kernel& k = items_[static_cast<size_t>(id)].kernel;
      JobItem item;
      item.id = id;
      item.function = k.function;
      item.ir = k.ir;
      item.declare_line = k.declare_line;
      job.items.push_back(std::move(item));
    }
    ++jobs_;
    pool.submit(std::move(job));
  }

  void split(WorkerPool& pool, const std::string& target, const std::vector<int>& ids) {
    size_t half = ids.size() / 2;
    submit(pool, target, std::vector<int>(ids.begin(), ids.begin() + static_cast<long>(half)));
    submit(pool, target, std::vector<int>(ids.begin() + static_cast<long>(half), ids.end()));
  }

  void on_compile_end(WorkerPool& pool, const Job& job, const WorkerEnd& end) {
    std::vector<int> unfinished;
    for (const auto& item : job.items)
      if (!attempt(item.id).report) unfinished.push_back(item.id);
    if (end.completed()) {
      if (end.unattributed_error.empty() || job.items.empty()) return;
      if (job.items.size() == 1) {
        if (auto& report = attempt(job.items[0].id).report) report->error = end.unattributed_error;
        return;
      }
      // An error LLVM raised outside any function: find its kernel by halving the batch.
      std::vector<int> all;
      for (const auto& item : job.items) {
        --done_;
        all.push_back(item.id);
      }
      split(pool, job.target, all);
      return;
    }
    ++worker_deaths_;
    if (unfinished.empty()) return;
    if (end.how == EndKind::kJobError) {
      if (unfinished.size() == 1) {
        attempt(unfinished[0]).death = end;
        ++done_;
      } else {
        for (int id : unfinished) submit(pool, job.target, {id});
      }
      return;
    }
    int culprit = -1;
    for (int id : unfinished)
      if (items_[static_cast<size_t>(id)].kernel.function == end.function) culprit = id;
    if (culprit < 0 && unfinished.size() == 1) culprit = unfinished[0];
    if (culprit < 0) {
      split(pool, job.target, unfinished);
      return;
    }
    attempt(culprit).death = end;
    ++done_;
    std::vector<int> rest;
    for (int id : unfinished)
      if (id != culprit) rest.push_back(id);
    if (!rest.empty()) submit(pool, job.target, rest);
  }

  ExecutorOptions options_;
  int workers_ = 1;
  EncodingTable encodings_;  // before the forks, like the machines: every worker reads it
  std::map<std::string, std::string> defects_;  // target -> what its assembler rejects of every kernel
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines_;
  std::map<std::string, std::unique_ptr<Assembler>> assemblers_;
  std::map<std::string, std::unique_ptr<EncodingCheck>> encoding_checks_;  // target -> its bare mnemonics asked
  std::map<std::string, TargetResources> resources_;
  std::unique_ptr<WorkerPool> pool_;         // batches
  std::unique_ptr<WorkerPool> serial_pool_;  // one kernel at a time
  std::vector<Item> items_;                  // the kernels of the compile call under way
  int planned_ = 0, done_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_pool_executor(const ExecutorOptions& options) {
  initialize_amdgpu();
  return std::make_unique<PoolExecutor>(options);
}

}  // namespace archdb
