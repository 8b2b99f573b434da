// probe/probe.cpp — the measuring of a column (see probe.h).
#include "probe/probe.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

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

#include "probe/asm_text.h"
#include "probe/assemble.h"
#include "probe/classify.h"
#include "probe/verdict.h"
#include "probe/llvm_compat.h"
#include "probe/pool.h"
#include "probe/resolve.h"
#include "probe/synth.h"
#include "probe/toolchain.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;

struct KeyState {
  const CatalogEntry* entry = nullptr;
  const DeclSpec* spec = nullptr;
  bool resolved_reported = false;
  Resolution resolution;
  std::optional<WorkerEnd> resolve_death;  // LLVM died reading the declaration
  std::string function;  // its probe kernel, "p<index>"
  std::string baseline;  // its baseline kernel, "b<index>"
};

struct CompileItem {
  std::string target;
  std::string function;
  std::string ir;
  std::string declare_line;
};

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

class ProbeRun {
 public:
  ProbeRun(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries, const ProbeOptions& options)
      : catalog_(catalog), options_(options), label_("LLVM " + linked_toolchain().llvm_version) {
    for (size_t i = 0; i < entries.size(); ++i) {
      KeyState k;
      k.entry = entries[i];
      k.spec = &entries[i]->spec_for(options.flavor);
      k.function = "p" + std::to_string(i);
      keys_.push_back(k);
    }
    for (const auto& t : options.targets) (knows_processor(t) ? known_ : unknown_).push_back(t);
    workers_ = options.jobs > 0 ? options.jobs : usable_cpus();
  }

  // Phase 1 alone, for declarations that are not a catalog's (the census's candidate instantiations).
  std::vector<ResolveOutcome> resolve_only() {
    prepare_targets();
    resolve_declarations();
    std::vector<ResolveOutcome> out;
    for (const auto& k : keys_) {
      ResolveOutcome o;
      o.resolution = k.resolution;
      if (k.resolve_death) {
        Verdict v = classify_death(*k.resolve_death, options_.timeout_s);
        o.died = true;
        o.resolution.kind = Resolution::Kind::kProbeError;
        o.resolution.evidence = "LLVM died reading the declaration: " + v.evidence;
      } else if (!k.resolved_reported) {
        o.resolution.kind = Resolution::Kind::kProbeError;
        o.resolution.evidence = "no report from the worker";
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  ProbeResult run() {
    auto start = Clock::now();
    timed("set-up", [&] { prepare_targets(); });
    timed("resolve", [&] { resolve_phase(); });
    timed("compile", [&] { compile_phase(); });
    timed("sweep", [&] { sweep_phase(); });
    timed("retry+baseline", [&] { retry_and_baseline_phase(); });
    timed("object", [&] { object_phase(); });
    ProbeResult result = assemble_column();
    stats_.workers = workers_;
    stats_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.stats = stats_;
    if (options_.progress) std::fprintf(stderr, "\r\033[K");
    return result;
  }

 private:
  template <typename Fn>
  void timed(const char* phase, Fn fn) {
    auto t = Clock::now();
    fn();
    stats_.phases.push_back({phase, std::chrono::duration<double>(Clock::now() - t).count()});
  }

  // ---- set-up ----

  void prepare_targets() {
    llvm::TargetOptions target_options;
    for (const auto& cpu : known_) {
      std::unique_ptr<llvm::TargetMachine> machine(compat::create_target_machine(
          amdgpu_target(), amdgpu_triple(), cpu, target_options, llvm::CodeGenOptLevel::None));
      if (!machine) throw internal_error("LLVM could not create a target machine for " + cpu);
      // Warming up is codegen in this process: LLVM failing at it must not end the run. A machine that
      // cannot warm up is still used; its workers then meet the same failure, per kernel.
      {
        const void* stack = llvm::SavePrettyStackState();
        llvm::CrashRecoveryContext recovery;
        ParentFatalErrors guard;
        if (!recovery.RunSafely([&] { warm_up(*machine); })) llvm::RestorePrettyStackState(stack);
      }
      assemblers_[cpu] = std::make_unique<Assembler>(cpu);
      resources_[cpu] = TargetResources{machine.get(), assemblers_[cpu].get()};
      machines_.push_back(std::move(machine));
    }
    // Forked now, while this process holds little but the target machines the workers need.
    auto zygote = std::make_shared<Zygote>(resources_, label_);
    pool_ = std::make_unique<WorkerPool>(workers_, zygote);
    serial_pool_ = std::make_unique<WorkerPool>(1, zygote);
    if (!known_.empty()) {
      // Retries run one at a time and most crash again, and a fresh worker takes several times as long to
      // warm up as a retry to run: while one runs, a spare warms up on each CPU the run may use.
      Job warm;
      warm.target = known_.front();
      warm.timeout_s = options_.timeout_s;
      warm.items.push_back({-1, "warm", "define amdgpu_kernel void @warm(ptr addrspace(1) %out, <4 x float> %v) {\n"
                                        "  store volatile <4 x float> %v, ptr addrspace(1) %out\n  ret void\n}\n",
                            "", DeclSpec{}});
      serial_pool_->keep_warm_spares(std::move(warm), workers_);
    }
  }

  // Compiles an empty kernel once, so the subtarget the machine caches is built here, before the forks,
  // instead of again in every worker.
  static void warm_up(llvm::TargetMachine& machine) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic diag;
    auto module = llvm::parseAssemblyString("define amdgpu_kernel void @warm() { ret void }", diag, context);
    compat::set_target_triple(*module, amdgpu_triple());
    set_probe_module_flags(*module);
    module->setDataLayout(machine.createDataLayout());
    llvm::SmallString<0> sink;
    llvm::raw_svector_ostream os(sink);
    llvm::legacy::PassManager passes;
    if (!machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) passes.run(*module);
  }

  void tick(const char* phase) {
    if (!options_.progress) return;
    std::fprintf(stderr, "\r\033[K%s: %s %d/%d  (%d workers, %d worker restarts)", options_.flavor.c_str(), phase,
                 done_, planned_, workers_, stats_.worker_deaths);
    std::fflush(stderr);
  }

  // ---- phase 1: resolve ----

  void submit_resolve(WorkerPool& pool, const std::vector<int>& key_indices) {
    Job job;
    job.kind = Job::Kind::kResolve;
    job.timeout_s = options_.timeout_s;
    job.immarg_sweep = options_.immarg_sweep;
    for (int i : key_indices) {
      JobItem item;
      item.id = i;
      item.spec = *keys_[static_cast<size_t>(i)].spec;
      job.items.push_back(item);
    }
    ++stats_.jobs;
    pool.submit(std::move(job));
  }

  void run_resolve_jobs(const std::vector<int>& indices, bool serial) {
    WorkerPool& pool = serial ? *serial_pool_ : *pool_;
    int workers = pool.workers();
    bool one_per_job = serial;
    if (one_per_job) {
      for (int i : indices) submit_resolve(pool, {i});
    } else {
      size_t per = (indices.size() + static_cast<size_t>(workers) - 1) / static_cast<size_t>(workers);
      for (size_t b = 0; b < indices.size(); b += per)
        submit_resolve(pool, std::vector<int>(indices.begin() + static_cast<long>(b),
                                              indices.begin() + static_cast<long>(std::min(indices.size(), b + per))));
    }
    WorkerPool::Callbacks cb;
    cb.on_resolved = [&](const Job&, const ResolveReport& r) {
      KeyState& k = keys_.at(static_cast<size_t>(r.id));
      k.resolved_reported = true;
      k.resolve_death.reset();
      k.resolution = r.resolution;
      ++done_;
    };
    cb.on_end = [&](const Job& job, const WorkerEnd& end) {
      if (end.completed()) return;
      ++stats_.worker_deaths;
      // Declarations are resolved in order: the first unreported one is the one LLVM died on.
      std::vector<int> rest;
      for (const auto& item : job.items)
        if (!keys_[static_cast<size_t>(item.id)].resolved_reported) rest.push_back(item.id);
      if (rest.empty()) return;
      KeyState& culprit = keys_[static_cast<size_t>(rest.front())];
      culprit.resolve_death = end;
      ++done_;
      rest.erase(rest.begin());
      if (!rest.empty()) submit_resolve(pool, rest);
    };
    cb.on_tick = [&] { tick("resolving"); };
    pool.run(cb);
  }

  void resolve_phase() {
    resolve_declarations();
    for (const auto& k : keys_) {
      if (k.resolved_reported && k.resolution.kind == Resolution::Kind::kCatalogError)
        throw input_error(catalog_.path + ":" + std::to_string(k.spec->line) + ": key '" + k.entry->key +
                          "': " + k.resolution.evidence);
    }
    make_baselines();
  }

  void resolve_declarations() {
    planned_ = static_cast<int>(keys_.size());
    done_ = 0;
    std::vector<int> all;
    for (size_t i = 0; i < keys_.size(); ++i) all.push_back(static_cast<int>(i));
    run_resolve_jobs(all, false);
    for (int round = 0; round < options_.retries; ++round) {
      std::vector<int> again;
      for (size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i].resolve_death) again.push_back(static_cast<int>(i));
      if (again.empty()) break;
      stats_.retried += static_cast<int>(again.size());
      run_resolve_jobs(again, true);
    }
  }

  void make_baselines() {
    // Baselines: one kernel per distinct signature.
    std::map<std::string, std::string> baseline_by_signature;
    for (auto& k : keys_) {
      if (!resolved(k)) continue;
      std::string sig = baseline_signature(k.resolution.shape);
      auto it = baseline_by_signature.find(sig);
      if (it == baseline_by_signature.end()) {
        std::string fn = "b" + std::to_string(baseline_by_signature.size());
        it = baseline_by_signature.emplace(sig, fn).first;
        baseline_ir_[fn] = baseline_kernel_ir(fn, k.resolution.shape);
      }
      k.baseline = it->second;
    }
    if (!options_.keep_ir_dir.empty()) keep_ir();
  }

  static bool resolved(const KeyState& k) {
    return k.resolved_reported && k.resolution.kind == Resolution::Kind::kResolved;
  }

  void keep_ir() {
    std::filesystem::create_directories(options_.keep_ir_dir);
    for (const auto& k : keys_) {
      std::string text = "; archdb probe module of key '" + k.entry->key + "' (" + options_.flavor + ")\n";
      if (resolved(k)) {
        text += k.resolution.shape.declare_line + "\n";
        if (k.resolution.shape.declare_line != kProbeSupportDeclare) text += std::string(kProbeSupportDeclare) + "\n";
        text += probe_kernel_ir(k.function, k.resolution.shape, k.resolution.default_imm);
        text += baseline_ir_.at(k.baseline);
      } else if (k.spec->kind == DeclSpec::Kind::kDeclare) {
        text += "; not probed: " + k.resolution.evidence + "\n" + k.spec->declare_text + "\n";
      } else {
        text += "; not probed: " + k.resolution.evidence + "\n";
      }
      write_file_atomically(std::filesystem::path(options_.keep_ir_dir) / (k.entry->key + ".ll"), text);
    }
  }

  // ---- phase 2: compile ----

  int add_item(const std::string& target, const std::string& function, const std::string& ir,
               const std::string& declare_line) {
    items_.push_back({target, function, ir, declare_line});
    return static_cast<int>(items_.size() - 1);
  }

  void submit_compile(WorkerPool& pool, const std::string& target, const std::vector<int>& ids) {
    Job job;
    job.kind = Job::Kind::kCompile;
    job.target = target;
    job.timeout_s = options_.timeout_s;
    job.cpu_budget_ms = retrying_ ? options_.retry_cpu_budget_ms : options_.cpu_budget_ms;
    job.hang_function = retrying_ && options_.inject_hang_first_attempt_only ? "" : hang_function_;
    job.recover_refusals = !options_.strict_isolation;
    job.emit_object = emitting_objects_;
    for (int id : ids) {
      const CompileItem& ci = items_[static_cast<size_t>(id)];
      JobItem item;
      item.id = id;
      item.function = ci.function;
      item.ir = ci.ir;
      item.declare_line = ci.declare_line;
      job.items.push_back(std::move(item));
    }
    ++stats_.jobs;
    pool.submit(std::move(job));
  }

  Attempt& attempt(int id) {
    const CompileItem& ci = items_[static_cast<size_t>(id)];
    return attempts_[ci.target][ci.function];
  }

  // Submits compile jobs for `ids` to `pool`, grouped by target in batches, targets interleaved so that
  // every worker has work from the start.
  void submit_compile_jobs(WorkerPool& pool, const std::vector<int>& ids, size_t batch) {
    std::map<std::string, std::vector<int>> by_target;
    for (int id : ids) {
      attempt(id) = Attempt{};
      by_target[items_[static_cast<size_t>(id)].target].push_back(id);
    }
    std::vector<std::pair<std::string, std::vector<int>>> batches;
    for (auto& [target, list] : by_target)
      for (size_t b = 0; b < list.size(); b += batch)
        batches.push_back({target, std::vector<int>(list.begin() + static_cast<long>(b),
                                                    list.begin() + static_cast<long>(std::min(list.size(), b + batch)))});
    for (const auto& [target, list] : batches) submit_compile(pool, target, list);
  }

  // Every item ends with a report or a death attributed to it (on_compile_end).
  WorkerPool::Callbacks compile_callbacks(WorkerPool& pool) {
    WorkerPool::Callbacks cb;
    cb.on_compiled = [this](const Job&, const CompileReport& r) {
      if (r.id < 0) return;
      Attempt& a = attempt(r.id);
      a.report = r;
      stats_.slowest_answer_cpu_ms = std::max(stats_.slowest_answer_cpu_ms, r.cpu_ms);
      ++done_;
    };
    cb.on_end = [this, &pool](const Job& job, const WorkerEnd& end) { on_compile_end(pool, job, end); };
    cb.on_tick = [this] { tick(phase_); };
    return cb;
  }

  void run_compile_jobs(const std::vector<int>& ids, bool serial, size_t batch) {
    WorkerPool& pool = serial ? *serial_pool_ : *pool_;
    submit_compile_jobs(pool, ids, batch);
    WorkerPool::Callbacks cb = compile_callbacks(pool);
    pool.run(cb);
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
        attempt(item.id) = Attempt{};
        --done_;
        all.push_back(item.id);
      }
      split_and_submit(pool, job.target, all);
      return;
    }
    ++stats_.worker_deaths;
    if (unfinished.empty()) return;
    if (end.how == EndKind::kJobError) {
      if (unfinished.size() == 1) {
        attempt(unfinished[0]).death = end;
        ++done_;
      } else {
        for (int id : unfinished) submit_compile(pool, job.target, {id});
      }
      return;
    }
    int culprit = -1;
    for (int id : unfinished)
      if (items_[static_cast<size_t>(id)].function == end.function) culprit = id;
    if (culprit < 0 && unfinished.size() == 1) culprit = unfinished[0];
    if (culprit < 0) {
      split_and_submit(pool, job.target, unfinished);
      return;
    }
    attempt(culprit).death = end;
    ++done_;
    std::vector<int> rest;
    for (int id : unfinished)
      if (id != culprit) rest.push_back(id);
    if (!rest.empty()) submit_compile(pool, job.target, rest);
  }

  void split_and_submit(WorkerPool& pool, const std::string& target, const std::vector<int>& ids) {
    size_t half = ids.size() / 2;
    submit_compile(pool, target, std::vector<int>(ids.begin(), ids.begin() + static_cast<long>(half)));
    submit_compile(pool, target, std::vector<int>(ids.begin() + static_cast<long>(half), ids.end()));
  }

  void compile_phase() {
    if (!options_.inject_hang_key.empty()) {
      for (const auto& k : keys_)
        if (k.entry->key == options_.inject_hang_key) hang_function_ = k.function;
    }
    std::vector<int> ids;
    for (const auto& target : known_) {
      for (const auto& k : keys_) {
        if (!resolved(k)) continue;
        ids.push_back(add_item(target, k.function, probe_kernel_ir(k.function, k.resolution.shape, k.resolution.default_imm),
                               k.resolution.shape.declare_line));
      }
    }
    planned_ = static_cast<int>(ids.size());
    done_ = 0;
    phase_ = "probing";
    run_compile_jobs(ids, false, static_cast<size_t>(std::max(1, options_.batch_size)));
  }

  // ---- verdicts ----

  Verdict verdict_of(const Attempt& a) const { return archdb::verdict_of(a, options_.timeout_s); }

  const Attempt* find_attempt(const std::string& target, const std::string& function) const {
    auto t = attempts_.find(target);
    if (t == attempts_.end()) return nullptr;
    auto f = t->second.find(function);
    return f == t->second.end() ? nullptr : &f->second;
  }

  // ---- phase 3: immarg sweep ----

  // The sweep tries the values in order on each negative whose declaration has integer immarg operands,
  // and stops at the first value that lowers, or at the first value refused exactly as the default was
  // (immediates masked): a refusal that does not change with the immediate is not about the immediate.
  // Each negative is swept once: those of the first attempts here, those of the retries after them.
  void sweep_phase() {
    struct Pending {
      size_t key;
      std::string target;
      std::string default_refusal;  // masked evidence of the default probe
      std::set<std::string> tried_texts;
      bool open = true;
    };
    std::vector<Pending> pending;
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeyState& k = keys_[i];
      if (!resolved(k) || !k.resolution.shape.has_int_immarg()) continue;
      for (const auto& target : known_) {
        const Attempt* a = find_attempt(target, k.function);
        if (!a) continue;
        Verdict v = verdict_of(*a);
        if (v.status == Status::kArchAbsent && swept_.insert({i, target}).second)
          pending.push_back({i, target, mask_immediates(v.evidence), {probe_kernel_ir("x", k.resolution.shape, k.resolution.default_imm)}, true});
      }
    }
    phase_ = "immarg sweep";
    for (int64_t value : options_.immarg_sweep) {
      std::vector<int> ids;
      std::vector<std::pair<size_t, int>> round;  // pending index -> item
      for (size_t p = 0; p < pending.size(); ++p) {
        Pending& pd = pending[p];
        if (!pd.open) continue;
        const KeyState& k = keys_[pd.key];
        std::string text = probe_kernel_ir("x", k.resolution.shape, value);
        if (!pd.tried_texts.insert(text).second) continue;  // this value writes the same kernel again
        tried_values_[{pd.key, pd.target}].push_back(value);
        std::string fn = k.function + "_s" + std::to_string(value);
        int id = add_item(pd.target, fn, probe_kernel_ir(fn, k.resolution.shape, value), k.resolution.shape.declare_line);
        ids.push_back(id);
        round.push_back({p, id});
      }
      if (ids.empty()) continue;
      stats_.sweep_probes += static_cast<int>(ids.size());
      planned_ = static_cast<int>(ids.size());
      done_ = 0;
      run_compile_jobs(ids, false, static_cast<size_t>(std::max(1, options_.batch_size)));
      for (const auto& [p, id] : round) {
        Pending& pd = pending[p];
        Verdict v = verdict_of(attempt(id));
        if (v.status == Status::kOk) {
          sweep_solution_[{pd.key, pd.target}] = {value, items_[static_cast<size_t>(id)].function};
          pd.open = false;
        } else if (mask_immediates(v.evidence) == pd.default_refusal) {
          pd.open = false;
        }
      }
    }
  }

  // ---- phase 4: serial retries of non-answers, and the baselines beside them ----

  std::vector<int> retry_items() {
    std::vector<int> ids;
    for (const auto& k : keys_) {
      if (!resolved(k)) continue;
      for (const auto& target : known_) {
        const Attempt* a = find_attempt(target, k.function);
        if (!a) continue;
        Status s = verdict_of(*a).status;
        if (s == Status::kToolchainCrash || s == Status::kToolchainTimeout)
          ids.push_back(add_item(target, k.function, probe_kernel_ir(k.function, k.resolution.shape, k.resolution.default_imm),
                                 k.resolution.shape.declare_line));
      }
    }
    return ids;
  }

  // Baselines where a probe lowered (directly or through the sweep) that are not compiled yet.
  std::vector<int> baseline_items() {
    std::vector<int> ids;
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeyState& k = keys_[i];
      if (!resolved(k)) continue;
      for (const auto& target : known_) {
        const Attempt* a = find_attempt(target, k.function);
        bool lowered = (a && verdict_of(*a).status == Status::kOk) || sweep_solution_.count({i, target});
        if (lowered && baselines_submitted_.insert({target, k.baseline}).second)
          ids.push_back(add_item(target, k.baseline, baseline_ir_.at(k.baseline), ""));
      }
    }
    return ids;
  }

  // Retries run one at a time, each kernel alone in a fresh worker. The baselines, which do not depend on
  // them, run beside them on the other workers, unless a retry is a timeout: a budget is judged with
  // nothing else running.
  void retry_and_baseline_phase() {
    size_t batch = static_cast<size_t>(std::max(1, options_.batch_size));
    retrying_ = true;
    for (int round = 0; round < options_.retries; ++round) {
      std::vector<int> retries = retry_items();
      if (retries.empty()) break;
      bool timeouts = false;
      for (int id : retries)
        timeouts |= verdict_of(*find_attempt(items_[static_cast<size_t>(id)].target, items_[static_cast<size_t>(id)].function))
                        .status == Status::kToolchainTimeout;
      if (options_.parallel_crash_retries) {
        retry_crashes_in_parallel(retries, round == 0, batch);
        continue;
      }
      std::vector<int> baselines = round == 0 && !timeouts ? baseline_items() : std::vector<int>{};
      stats_.retried += static_cast<int>(retries.size());
      phase_ = "retrying";
      planned_ = static_cast<int>(retries.size() + baselines.size());
      done_ = 0;
      submit_compile_jobs(*serial_pool_, retries, 1);
      WorkerPool::Callbacks serial = compile_callbacks(*serial_pool_);
      if (baselines.empty()) {
        serial_pool_->run(serial);
      } else {
        submit_compile_jobs(*pool_, baselines, batch);
        WorkerPool::Callbacks parallel = compile_callbacks(*pool_);
        WorkerPool::run_together({{serial_pool_.get(), &serial}, {pool_.get(), &parallel}});
      }
    }
    retrying_ = false;
    // A probe that ran out of its budget and was refused on the retry is swept like any other refusal, so
    // that its cell does not depend on how loaded the machine was on the first attempt.
    sweep_phase();
    std::vector<int> baselines = baseline_items();
    if (baselines.empty()) return;
    phase_ = "baselines";
    planned_ = static_cast<int>(baselines.size());
    done_ = 0;
    run_compile_jobs(baselines, false, batch);
  }

  // Crashes are retried each alone in a job of its own on the parallel workers, beside the baselines (a
  // crash does not depend on what runs beside it); timeouts then one at a time with nothing else running.
  void retry_crashes_in_parallel(const std::vector<int>& retries, bool with_baselines, size_t batch) {
    std::vector<int> crashes, timeouts;
    for (int id : retries) {
      const CompileItem& ci = items_[static_cast<size_t>(id)];
      bool timeout = verdict_of(*find_attempt(ci.target, ci.function)).status == Status::kToolchainTimeout;
      (timeout ? timeouts : crashes).push_back(id);
    }
    if (options_.parallel_timeout_retries) {
      crashes.insert(crashes.end(), timeouts.begin(), timeouts.end());
      timeouts.clear();
    }
    std::vector<int> baselines = with_baselines ? baseline_items() : std::vector<int>{};
    stats_.retried += static_cast<int>(retries.size());
    phase_ = "retrying";
    planned_ = static_cast<int>(crashes.size() + baselines.size());
    done_ = 0;
    if (!crashes.empty() || !baselines.empty()) {
      submit_compile_jobs(*pool_, crashes, 1);
      submit_compile_jobs(*pool_, baselines, batch);
      WorkerPool::Callbacks parallel = compile_callbacks(*pool_);
      pool_->run(parallel);
    }
    if (timeouts.empty()) return;
    planned_ = static_cast<int>(timeouts.size());
    done_ = 0;
    submit_compile_jobs(*serial_pool_, timeouts, 1);
    WorkerPool::Callbacks serial = compile_callbacks(*serial_pool_);
    serial_pool_->run(serial);
  }

  // ---- phase 6: objects for what the MC assembler rejected ----

  // The function that lowered a cell: its probe, or the sweep variant that worked.
  std::string lowered_function(size_t key, const std::string& target) const {
    auto solution = sweep_solution_.find({key, target});
    return solution != sweep_solution_.end() ? solution->second.second : keys_[key].function;
  }

  void object_phase() {
    std::vector<int> ids;
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeyState& k = keys_[i];
      if (!resolved(k)) continue;
      for (const auto& target : known_) {
        std::string fn = lowered_function(i, target);
        const Attempt* a = find_attempt(target, fn);
        if (!a || verdict_of(*a).status != Status::kOk || a->report->mc_errors.empty()) continue;
        int64_t imm = fn == k.function ? k.resolution.default_imm : sweep_solution_.at({i, target}).first;
        ids.push_back(add_item(target, fn + "_obj", probe_kernel_ir(fn + "_obj", k.resolution.shape, imm),
                               k.resolution.shape.declare_line));
      }
    }
    if (ids.empty()) return;
    phase_ = "objects";
    planned_ = static_cast<int>(ids.size());
    done_ = 0;
    emitting_objects_ = true;
    run_compile_jobs(ids, false, static_cast<size_t>(std::max(1, options_.batch_size)));
    emitting_objects_ = false;
  }

  // ---- the column ----

  ProbeResult assemble_column() {
    ProbeResult result;
    result.column.provenance = probe_provenance(options_);
    for (const auto& k : keys_) {
      for (const auto& target : options_.targets) {
        Cell c = cell_for(k, target);
        if (c.status == Status::kProbeError) result.probe_errors.push_back(k.entry->key + "/" + target + ": " + c.evidence);
        result.column.cells.push_back(std::move(c));
      }
    }
    result.column.sort();
    result.column.recount();
    return result;
  }

  Cell cell_for(const KeyState& k, const std::string& target) const {
    size_t key = static_cast<size_t>(&k - keys_.data());
    CellInputs in;
    in.key = k.entry->key;
    in.target = target;
    in.declared_name = k.spec->name;
    in.resolve_death = k.resolve_death;
    in.resolution = k.resolution;
    if (!k.resolve_death && !k.resolved_reported) {
      in.resolution.kind = Resolution::Kind::kProbeError;
      in.resolution.evidence = "no report from the worker";
    }
    in.target_known = std::find(unknown_.begin(), unknown_.end(), target) == unknown_.end();
    in.flavor_label = label_;
    in.timeout_s = options_.timeout_s;
    in.probe = find_attempt(target, k.function);
    auto tried = tried_values_.find({key, target});
    if (tried != tried_values_.end()) in.swept = tried->second;
    auto solution = sweep_solution_.find({key, target});
    if (solution != sweep_solution_.end()) {
      in.sweep_value = solution->second.first;
      in.sweep_attempt = find_attempt(target, solution->second.second);
    }
    in.baseline = find_attempt(target, k.baseline);
    in.object = find_attempt(target, lowered_function(key, target) + "_obj");
    return decide_cell(in);
  }

  const Catalog& catalog_;
  const ProbeOptions& options_;
  std::string label_;
  std::vector<KeyState> keys_;
  std::vector<std::string> known_, unknown_;
  int workers_ = 1;
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines_;
  std::map<std::string, std::unique_ptr<Assembler>> assemblers_;
  std::map<std::string, TargetResources> resources_;
  std::unique_ptr<WorkerPool> pool_;         // the parallel phases
  std::unique_ptr<WorkerPool> serial_pool_;  // retries: one probe at a time
  std::map<std::string, std::string> baseline_ir_;
  std::vector<CompileItem> items_;
  std::map<std::string, std::map<std::string, Attempt>> attempts_;
  std::map<std::pair<size_t, std::string>, std::pair<int64_t, std::string>> sweep_solution_;
  std::map<std::pair<size_t, std::string>, std::vector<int64_t>> tried_values_;
  std::set<std::pair<size_t, std::string>> swept_;  // (key, target) negatives the sweep has taken up
  std::string hang_function_;
  bool emitting_objects_ = false;  // compile jobs submitted now write objects (see object_phase)
  std::set<std::pair<std::string, std::string>> baselines_submitted_;  // (target, baseline function)
  ProbeStats stats_;
  int planned_ = 0, done_ = 0;
  const char* phase_ = "probing";
  bool retrying_ = false;  // jobs now submitted are retries (their CPU budget is the retry's)
};

}  // namespace

Provenance probe_provenance(const ProbeOptions& options) {
  const ToolchainInfo& tc = linked_toolchain();
  Provenance p;
  p.flavor = options.flavor;
  p.llvm_version = tc.llvm_version;
  p.llvm_major = tc.llvm_major;
  p.identity = tc.identity;
  p.package = tc.package;
  p.prerelease = tc.prerelease;
  p.timeout_s = options.timeout_s;
  p.code_object_version = kCodeObjectVersion;
  p.retries = options.retries;
  p.immarg_sweep = options.immarg_sweep;
  p.targets = options.targets;
  return p;
}

ProbeResult run_probe(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries,
                      const ProbeOptions& options) {
  initialize_amdgpu();
  ProbeRun run(catalog, entries, options);
  return run.run();
}

std::vector<ResolveOutcome> resolve_declarations(const std::vector<DeclSpec>& specs, const ProbeOptions& options) {
  initialize_amdgpu();
  Catalog catalog;
  catalog.path = "(declarations)";
  for (size_t i = 0; i < specs.size(); ++i) {
    CatalogEntry e;
    e.key = "d" + std::to_string(i);
    e.spec = specs[i];
    catalog.entries.push_back(std::move(e));
  }
  std::vector<const CatalogEntry*> entries;
  for (const auto& e : catalog.entries) entries.push_back(&e);
  ProbeOptions resolving = options;
  resolving.targets.clear();
  resolving.keep_ir_dir.clear();
  ProbeRun run(catalog, entries, resolving);
  return run.resolve_only();
}

}  // namespace archdb
