// probe/probe.cpp — the measuring of a column (see probe.h).
#include "probe/probe.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
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
#include "llvm/llvm_compat.h"
#include "probe/pool.h"
#include "probe/resolve.h"
#include "probe/synth.h"
#include "llvm/toolchain.h"
#include "schema/targets.h"
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
    // A target may carry features ("gfx1100:+wavefrontsize64"): its processor must be one LLVM knows.
    for (const auto& t : options.targets) (knows_processor(target_processor(t)) ? known_ : unknown_).push_back(t);
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
    timed("retry+baseline", [&] { retry_and_baseline_phase(); });
    timed("posings", [&] { posing_phase(); });
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
      std::unique_ptr<llvm::TargetMachine> machine(
          compat::create_target_machine(amdgpu_target(), amdgpu_triple(), target_processor(cpu), target_options,
                                        llvm::CodeGenOptLevel::None, target_features(cpu)));
      if (!machine) throw internal_error("LLVM could not create a target machine for " + cpu);
      // Warming up is codegen in this process: LLVM failing at it must not end the run. A machine that
      // cannot warm up is still used; its workers then meet the same failure, per kernel.
      {
        const void* stack = llvm::SavePrettyStackState();
        llvm::CrashRecoveryContext recovery;
        ParentFatalErrors guard;
        if (!recovery.RunSafely([&] { warm_up(*machine); })) llvm::RestorePrettyStackState(stack);
      }
      assemblers_[cpu] = std::make_unique<Assembler>(target_processor(cpu), target_features(cpu));
      resources_[cpu] = TargetResources{machine.get(), assemblers_[cpu].get()};
      machines_.push_back(std::move(machine));
    }
    // Forked now, while this process holds little but the target machines the workers need.
    auto zygote = std::make_shared<Zygote>([this](int in_fd, int out_fd) { run_worker(in_fd, out_fd, resources_, label_); });
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
    for (auto& k : keys_)
      if (resolved(k)) k.baseline = baseline_for(k, default_posing(k));
    if (!options_.keep_ir_dir.empty()) keep_ir();
  }

  // Baselines: one kernel per distinct signature (a posing's operands and result are part of it).
  std::string baseline_for(const KeyState& k, const Posing& posing) {
    std::string sig = baseline_signature(k.resolution.shape, posing);
    auto it = baseline_by_signature_.find(sig);
    if (it == baseline_by_signature_.end()) {
      std::string fn = "b" + std::to_string(baseline_by_signature_.size());
      it = baseline_by_signature_.emplace(sig, fn).first;
      baseline_ir_[fn] = baseline_kernel_ir(fn, k.resolution.shape, posing);
    }
    return it->second;
  }

  static Posing default_posing(const KeyState& k) { return archdb::default_posing(k.resolution.shape, k.resolution.default_imm); }

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
        text += probe_kernel_ir(k.function, k.resolution.shape, default_posing(k));
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

  // The same kernel again, as a new item (a retry of a non-answer, whose text is kept).
  int repeat_item(int id) {
    CompileItem again = items_[static_cast<size_t>(id)];
    return add_item(again.target, again.function, again.ir, again.declare_line);
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
      // Answered: its kernel is never compiled again (only deaths are retried), so its text and declaration
      // go; the census's posings make tens of thousands of them.
      std::string().swap(items_[static_cast<size_t>(r.id)].ir);
      std::string().swap(items_[static_cast<size_t>(r.id)].declare_line);
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
        ids.push_back(add_item(target, k.function, probe_kernel_ir(k.function, k.resolution.shape, default_posing(k)),
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

  // ---- phase 5: other posings, where the default one was refused, became no instruction or was rejected ----

  // Tried in rounds, each open search one posing a round, until one decides it (README "How the probe
  // measures"). The immediate sweep stops at a refusal that does not change (immediates masked): such a
  // refusal is not about the immediate.
  void posing_phase() {
    std::vector<PosingSearch> searches;
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeyState& k = keys_[i];
      if (!resolved(k)) continue;
      for (const auto& target : known_) {
        const Attempt* a = find_attempt(target, k.function);
        if (!a) continue;
        Verdict v = verdict_of(*a);
        std::optional<PosingSearch> search;
        if (v.status == Status::kArchAbsent) {
          search = refused_search(i, target, v.evidence);
        } else if (v.status == Status::kOk) {
          const Attempt* base = find_attempt(target, k.baseline);
          std::vector<std::string> became = base && base->report ? lowered_mnemonics(a->report->mnemonics, base->report->mnemonics)
                                                                 : std::vector<std::string>{};
          if (base && base->report && became.empty())
            search = lowering_search(i, target, PosingSearch::Why::kNoInstruction);
          else if (!a->report->mc_errors.empty() && !names_missing_instruction(a->report->mc_errors, became))
            search = lowering_search(i, target, PosingSearch::Why::kRejectedAssembly);
        } else if (v.status == Status::kToolchainCrash && crashed_selecting(v.evidence)) {
          // Retried already. One way of posing the call crashes instruction selection; another may lower (an
          // image load that returns its fail status, posed with texfailctrl 0). A crash after selection
          // (finalizing it, branch relaxation, the hazard recognizer, the printer) is about the instruction
          // selected, which other immediates do not change: not posed again.
          search = lowering_search(i, target, PosingSearch::Why::kCrashed);
          search->default_refusal = mask_immediates(v.evidence);
        }
        if (search && !search->queue.empty()) searches.push_back(std::move(*search));
      }
    }
    phase_ = "posings";
    for (;;) {
      std::vector<int> ids;
      std::vector<std::pair<size_t, int>> round;  // search -> item
      for (size_t s = 0; s < searches.size(); ++s) {
        PosingSearch& ps = searches[s];
        const KeyState& k = keys_[ps.key];
        while (ps.open && ps.next < ps.queue.size()) {
          const auto& [group, posing] = ps.queue[ps.next];
          if (ps.closed_groups.count(group) || !ps.tried.insert(posing_signature(k.resolution.shape, posing)).second) {
            ++ps.next;  // a closed group, or a posing that writes the same kernel again
            continue;
          }
          std::string fn = k.function + "_q" + std::to_string(ps.next);
          int id = add_item(ps.target, fn, probe_kernel_ir(fn, k.resolution.shape, posing), k.resolution.shape.declare_line);
          ids.push_back(id);
          round.push_back({s, id});
          break;
        }
        if (ps.next >= ps.queue.size()) ps.open = false;
      }
      if (ids.empty()) break;
      stats_.sweep_probes += static_cast<int>(ids.size());
      for (const auto& [s, id] : round) {
        switch (searches[s].why) {
          case PosingSearch::Why::kRefused: ++stats_.posed_refused; break;
          case PosingSearch::Why::kNoInstruction: ++stats_.posed_no_instruction; break;
          case PosingSearch::Why::kRejectedAssembly: ++stats_.posed_rejected; break;
          case PosingSearch::Why::kCrashed: ++stats_.posed_crashed; break;
        }
      }
      planned_ = static_cast<int>(ids.size());
      done_ = 0;
      run_compile_jobs(ids, false, static_cast<size_t>(std::max(1, options_.batch_size)));
      // A posing that asks for work and makes LLVM hang decides a lowering search (below): it is probed once
      // more first, as every non-answer is, so that a busy machine does not decide it.
      std::vector<int> retries;
      for (const auto& [s, id] : round) {
        if (searches[s].why == PosingSearch::Why::kRefused || verdict_of(attempt(id)).status != Status::kToolchainTimeout) continue;
        retries.push_back(repeat_item(id));
      }
      if (!retries.empty()) retry_now(retries);
      // Posings whose baseline differs from the default's (uniform operands, an unused result) need theirs.
      std::vector<int> baselines;
      for (const auto& [s, id] : round) {
        const PosingSearch& ps = searches[s];
        const Posing& posing = ps.queue[ps.next].second;
        if (verdict_of(attempt(id)).status != Status::kOk) continue;
        std::string base = baseline_for(keys_[ps.key], posing);
        if (baselines_submitted_.insert({ps.target, base}).second)
          baselines.push_back(add_item(ps.target, base, baseline_ir_.at(base), ""));
      }
      if (!baselines.empty()) run_compile_jobs(baselines, false, static_cast<size_t>(std::max(1, options_.batch_size)));
      for (const auto& [s, id] : round) decide_posing(searches[s], id);
    }
    // Asked for work every way, LLVM found none that lowers and crashed on one: that crash (retried, as every
    // non-answer is) is what a kernel using the intrinsic for anything meets.
    std::vector<int> retries;
    for (const PosingSearch& ps : searches) {
      if (ps.decided || !ps.first_crash || ps.why == PosingSearch::Why::kCrashed) continue;
      solutions_[{ps.key, ps.target}] = {ps.first_crash->first, items_[static_cast<size_t>(ps.first_crash->second)].function};
      retries.push_back(repeat_item(ps.first_crash->second));
    }
    if (retries.empty()) return;
    retry_now(retries);
    for (const PosingSearch& ps : searches) {
      auto solution = solutions_.find({ps.key, ps.target});
      // A crash the retry does not repeat was the machine's, not LLVM's: the search found nothing.
      if (!ps.decided && solution != solutions_.end() && !is_non_answer(verdict_of(*find_attempt(ps.target, solution->second.second)).status))
        solutions_.erase(solution);
    }
  }

  struct PosingSearch {
    enum class Why { kRefused, kNoInstruction, kRejectedAssembly, kCrashed };
    size_t key = 0;
    std::string target;
    Why why = Why::kRefused;
    std::string default_refusal;  // masked evidence of the default probe (kRefused, kCrashed)
    std::vector<std::pair<int, Posing>> queue;  // (group, posing), in order
    size_t next = 0;
    std::set<int> closed_groups;
    std::set<std::string> tried;  // the posings' signatures (posing_signature): a kernel is never written twice
    std::set<std::string> refusals;  // masked refusals met so far
    int expansions = 0;
    bool open = true;
    bool decided = false;
    std::optional<std::pair<Posing, int>> first_crash;  // a lowering search's first posing LLVM crashed on
  };
  // Groups: >= 0 one immarg operand; kDerivedGroup and up, the posings derived from one that changed the refusal.
  static constexpr int kSweepGroup = -1, kUniformGroup = -2, kResultGroup = -3, kDerivedGroup = 1000;
  static constexpr int kMaxExpansions = 2;

  // Refusals that name the intrinsic itself as unselectable on this processor, or a missing feature: no
  // posing of its operands or result makes a pattern appear; only its immediates are swept (as ever).
  static bool structural_refusal(const std::string& evidence) {
    for (const char* s : {"Cannot select: intrinsic %", "intrinsic not supported on subtarget", "requires target feature",
                          "not supported on this GPU", "Do not know how to", "no libcall available"})
      if (evidence.find(s) != std::string::npos) return true;
    return false;
  }

  // Per immarg operand (integers only), the values tried alone, the others at the default: 1 (a flag, a
  // one-channel mask: image dmask 0 loads nothing); for a refusal, also a count of 1 encoded in bits 24-27
  // beside an index of 1 (ds.ordered.*: 0x1000001; out of most fields' range, so never used to ask a call
  // that lowered for work); for a call that became nothing or crashed selection, also 32 (ICMP_EQ, the first
  // integer predicate: icmp with predicate 0 or 1 folds away or crashes); for assembly the assembler
  // rejected, the masks of two, three and four channels too (an image store of N texels needs N channels).
  static std::vector<int64_t> operand_values(const std::string& type, PosingSearch::Why why) {
    if (type == "i1") return {1};
    switch (why) {
      case PosingSearch::Why::kRefused:
        if (type == "i32" || type == "i64") return {1, 16777217};
        return {1};
      case PosingSearch::Why::kRejectedAssembly: return {1, 3, 7, 15};
      case PosingSearch::Why::kNoInstruction:
      case PosingSearch::Why::kCrashed:
        if (type == "i32") return {1, 32};
        return {1};
    }
    return {1};
  }

  // Each integer immarg operand still at the default's value, set alone to each of its values. `group` < 0:
  // one group per operand.
  static std::vector<std::pair<int, Posing>> operand_posings(const Posing& base, const Posing& defaults,
                                                             const ProbeShape& shape, PosingSearch::Why why,
                                                             int group = -1) {
    std::vector<std::pair<int, Posing>> out;
    size_t immarg = 0;
    for (const auto& p : shape.params) {
      if (!p.immarg) continue;
      bool integer = p.type.size() > 1 && p.type[0] == 'i' && std::isdigit(static_cast<unsigned char>(p.type[1]));
      if (integer && base.imm[immarg] == defaults.imm[immarg])
        for (int64_t v : operand_values(p.type, why)) {
          Posing q = base;
          q.imm[immarg] = v;
          out.push_back({group < 0 ? static_cast<int>(immarg) : group, q});
        }
      ++immarg;
    }
    return out;
  }

  void add_operand_posings(PosingSearch& ps, const Posing& base, const ProbeShape& shape) const {
    for (auto& q : operand_posings(base, base, shape, ps.why)) ps.queue.push_back(std::move(q));
  }

  void add_sweep_posings(PosingSearch& ps, const ProbeShape& shape) const {
    if (!shape.has_int_immarg()) return;
    for (int64_t v : options_.immarg_sweep) ps.queue.push_back({kSweepGroup, Posing::all(shape, v)});
  }

  PosingSearch refused_search(size_t key, const std::string& target, const std::string& evidence) {
    const KeyState& k = keys_[key];
    const ProbeShape& shape = k.resolution.shape;
    PosingSearch ps;
    ps.key = key;
    ps.target = target;
    ps.why = PosingSearch::Why::kRefused;
    ps.default_refusal = mask_immediates(evidence);
    ps.refusals.insert(ps.default_refusal);
    Posing base = default_posing(k);
    ps.tried.insert(posing_signature(shape, base));
    add_sweep_posings(ps, shape);
    if (!structural_refusal(evidence)) {
      // One kernel each, before the immediates one at a time: a register class or an atomic's returning form
      // are common objections.
      if (has_divergent_operand(shape)) {
        Posing q = base;
        q.uniform = true;
        ps.queue.push_back({kUniformGroup, q});
      }
      if (shape.return_type != "void" && shape.has_side_effects) {
        Posing q = base;
        q.result_unused = true;
        ps.queue.push_back({kResultGroup, q});
      }
      add_operand_posings(ps, base, shape);
    }
    return ps;
  }

  PosingSearch lowering_search(size_t key, const std::string& target, PosingSearch::Why why) {
    const KeyState& k = keys_[key];
    PosingSearch ps;
    ps.key = key;
    ps.target = target;
    ps.why = why;
    Posing base = default_posing(k);
    ps.tried.insert(posing_signature(k.resolution.shape, base));
    add_operand_posings(ps, base, k.resolution.shape);
    add_sweep_posings(ps, k.resolution.shape);
    return ps;
  }

  void decide_posing(PosingSearch& ps, int id) {
    const KeyState& k = keys_[ps.key];
    auto [group, posing] = ps.queue[ps.next];
    ++ps.next;
    tried_posings_[{ps.key, ps.target}].push_back(posing);
    const Attempt& a = attempt(id);
    Verdict v = verdict_of(a);
    bool decided = false;
    switch (ps.why) {
      case PosingSearch::Why::kRefused:
        decided = v.status == Status::kOk;
        if (!decided && v.status == Status::kArchAbsent) {
          std::string refusal = mask_immediates(v.evidence);
          if (refusal == ps.default_refusal) {
            // The sweep stops (as ever); an operand's values are few, and one of them may encode a field the
            // others do not (ds.ordered.*: 1 and 15 are refused alike, 0x1000001 is not).
            if (group == kSweepGroup) ps.closed_groups.insert(group);
          } else if (group >= 0 && ps.expansions < kMaxExpansions && ps.refusals.insert(refusal).second) {
            // LLVM objects to something else now ("dword count must be between 1 and 4" became "wave_done
            // requires wave_release"): this immediate answered the first objection; the others are tried
            // again from it, next.
            ++ps.expansions;
            auto derived = operand_posings(posing, default_posing(k), k.resolution.shape, ps.why, kDerivedGroup + ps.expansions);
            ps.queue.insert(ps.queue.begin() + static_cast<long>(ps.next), derived.begin(), derived.end());
          }
        }
        break;
      case PosingSearch::Why::kNoInstruction:
      case PosingSearch::Why::kRejectedAssembly:
      case PosingSearch::Why::kCrashed: {
        // Asked to do some work (a channel to load), the processor refuses the intrinsic itself: it lowers only
        // as nothing, and a kernel that uses it for anything cannot be built (image samples on gfx90a). Or
        // LLVM hangs on it (retried): what a kernel that uses it meets, so the cell says that, and the search
        // spends no more budgets. A crash (also retried) is one posing's: the next may lower (an image load
        // returning its fail status crashes ISel unless texfailctrl asks for it); it is the cell only if none
        // does (above).
        if (v.status == Status::kToolchainTimeout) {
          decided = true;
          break;
        }
        if (v.status == Status::kArchAbsent && structural_refusal(v.evidence)) {
          // Decides only when asked for the least work (every immediate 0 or 1): an immediate out of its
          // field's range (texfailctrl 15) is refused as "Cannot select: intrinsic" on every processor, which
          // says nothing about the processor. The sweep's larger values are refused alike: it stops.
          if (std::all_of(posing.imm.begin(), posing.imm.end(), [](int64_t x) { return x == 0 || x == 1; })) {
            decided = true;
            break;
          }
          if (group == kSweepGroup) ps.closed_groups.insert(group);
          break;
        }
        if (v.status == Status::kToolchainCrash) {
          if (!ps.first_crash) ps.first_crash = {posing, id};
          // LLVM crashes as it did posed the default way: not about this immediate; its other values are
          // not tried (as a refusal that does not change closes the sweep).
          if (ps.why == PosingSearch::Why::kCrashed && mask_immediates(v.evidence) == ps.default_refusal)
            ps.closed_groups.insert(group);
          break;
        }
        if (v.status != Status::kOk) break;
        const Attempt* base = find_attempt(ps.target, baseline_for(k, posing));
        bool instruction = base && base->report && !lowered_mnemonics(a.report->mnemonics, base->report->mnemonics).empty();
        decided = ps.why == PosingSearch::Why::kRejectedAssembly ? instruction && a.report->mc_errors.empty() : instruction;
        break;
      }
    }
    if (decided) {
      solutions_[{ps.key, ps.target}] = {posing, items_[static_cast<size_t>(id)].function};
      ps.open = false;
      ps.decided = true;
    } else if (Attempt& tried = attempt(id); tried.report) {
      // A posing that decided nothing is never read for what it became again (only for how it ended, should
      // it be the search's first crash): its instructions go. Most of the census's posing kernels are such.
      std::vector<std::string>().swap(tried.report->mnemonics);
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
          ids.push_back(add_item(target, k.function, probe_kernel_ir(k.function, k.resolution.shape, default_posing(k)),
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
        bool lowered = a && verdict_of(*a).status == Status::kOk;
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
      phase_ = "retrying";
      retry_serially(retries, round == 0 && !timeouts ? baseline_items() : std::vector<int>{});
    }
    retrying_ = false;
    // The baselines of probes that lowered on the retry. (A probe that ran out of its budget and was refused
    // on the retry is posed again like any other refusal, so that its cell does not depend on how loaded the
    // machine was on the first attempt.)
    std::vector<int> baselines = baseline_items();
    if (baselines.empty()) return;
    phase_ = "baselines";
    planned_ = static_cast<int>(baselines.size());
    done_ = 0;
    run_compile_jobs(baselines, false, batch);
  }

  static bool crashed_selecting(const std::string& evidence) {
    for (const char* pass : {"in pass 'AMDGPU DAG->DAG Pattern Instruction Selection'", "in pass 'InstructionSelect'"})
      if (evidence.find(pass) != std::string::npos) return true;
    return false;
  }

  static bool is_non_answer(Status s) { return s == Status::kToolchainCrash || s == Status::kToolchainTimeout; }

  // Retries of `ids` (new items of kernels that crashed or hung), as the retry phase runs them.
  void retry_now(const std::vector<int>& ids) {
    retrying_ = true;
    if (options_.parallel_crash_retries)
      retry_crashes_in_parallel(ids, false, static_cast<size_t>(std::max(1, options_.batch_size)));
    else
      retry_serially(ids, {});
    retrying_ = false;
  }

  // Each retry alone in a fresh serial worker, one at a time; `baselines` meanwhile on the parallel workers.
  void retry_serially(const std::vector<int>& retries, const std::vector<int>& baselines) {
    stats_.retried += static_cast<int>(retries.size());
    planned_ = static_cast<int>(retries.size() + baselines.size());
    done_ = 0;
    submit_compile_jobs(*serial_pool_, retries, 1);
    WorkerPool::Callbacks serial = compile_callbacks(*serial_pool_);
    if (baselines.empty()) {
      serial_pool_->run(serial);
      return;
    }
    submit_compile_jobs(*pool_, baselines, static_cast<size_t>(std::max(1, options_.batch_size)));
    WorkerPool::Callbacks parallel = compile_callbacks(*pool_);
    WorkerPool::run_together({{serial_pool_.get(), &serial}, {pool_.get(), &parallel}});
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
    auto solution = solutions_.find({key, target});
    return solution != solutions_.end() ? solution->second.second : keys_[key].function;
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
        Posing posing = fn == k.function ? default_posing(k) : solutions_.at({i, target}).first;
        ids.push_back(add_item(target, fn + "_obj", probe_kernel_ir(fn + "_obj", k.resolution.shape, posing),
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
    in.default_posing = default_posing(k);
    auto tried = tried_posings_.find({key, target});
    if (tried != tried_posings_.end()) in.tried = tried->second;
    auto solution = solutions_.find({key, target});
    if (solution != solutions_.end()) {
      in.solution = solution->second.first;
      in.solution_attempt = find_attempt(target, solution->second.second);
      in.solution_baseline = find_attempt(target, baseline_by_signature_.at(baseline_signature(k.resolution.shape, *in.solution)));
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
  // (key, target) -> the posing that decided it and its kernel; every posing tried beyond the default.
  std::map<std::pair<size_t, std::string>, std::pair<Posing, std::string>> solutions_;
  std::map<std::pair<size_t, std::string>, std::vector<Posing>> tried_posings_;
  std::map<std::string, std::string> baseline_by_signature_;  // baseline signature -> its kernel
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
  p.posings = {"immarg sweep, every immediate alike: where refused",
               "each integer immediate alone, 1 and (i32, i64) 16777217, and again from one that changes the refusal "
               "(twice at most): where refused for other than the intrinsic itself",
               "uniform operands: where refused for other than the intrinsic itself",
               "the result unused: where an intrinsic with side effects is refused for other than the intrinsic itself",
               "each integer immediate alone, 1 and (i32) 32, then the immarg sweep: where the call became no "
               "instruction or LLVM crashed selecting it",
               "each integer immediate alone, 1, 3, 7 and 15, then the immarg sweep: where the assembler rejected what "
               "the call became"};
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
