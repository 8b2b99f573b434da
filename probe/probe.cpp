// probe/probe.cpp — the measuring of a column (see probe.h): the phases, and the column assembled from what
// they learnt. How kernels are compiled is the executor's (executor.h); how a cell is posed again, the posing
// searches' (posing_search.h); how a cell is decided from its attempts, decide.h's.
#include "probe/probe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"
#include "probe/asm_text.h"
#include "probe/decide.h"
#include "probe/posing_search.h"
#include "probe/synth.h"
#include "schema/targets.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;

// The probe kernel of the index-th entry (its posings are "p<index>_q<n>", its object "..._obj").
std::string probe_function(size_t index) { return "p" + std::to_string(index); }

struct KeyState {
  const CatalogEntry* entry = nullptr;
  const DeclSpec* spec = nullptr;
  bool resolved_reported = false;
  Resolution resolution;
  std::optional<WorkerEnd> resolve_death;  // LLVM died reading the declaration
  std::string function;  // its probe kernel
  std::string baseline;  // its baseline kernel, "b<index>"
  // A key with a wave64 layout (catalog.h) is two states: its spec everywhere but on wave64 targets, and its
  // wave64 spec there. nullopt: every target.
  std::optional<bool> wave64;

  bool measures(const std::string& target) const { return !wave64 || *wave64 == is_wave64_target(target); }
};

// A posing search under way for one (key, target).
struct OpenSearch {
  size_t key = 0;
  std::string target;
  std::unique_ptr<PosingSearch> search;
};

class ProbeRun {
 public:
  ProbeRun(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries, const ProbeOptions& options,
           Executor& executor)
      : catalog_(catalog), options_(options), executor_(executor), label_("LLVM " + linked_toolchain().llvm_version) {
    for (const CatalogEntry* entry : entries) {
      KeyState k;
      k.entry = entry;
      k.spec = &entry->spec_for(options.flavor);
      k.function = probe_function(keys_.size());
      if (!entry->wave64) {
        keys_.push_back(k);
        continue;
      }
      k.wave64 = false;
      keys_.push_back(k);
      k.spec = &*entry->wave64;
      k.wave64 = true;
      k.function = probe_function(keys_.size());
      keys_.push_back(k);
    }
    // A target may carry features ("gfx1100:+wavefrontsize64"): its processor must be one LLVM knows.
    for (const auto& t : options.targets) (knows_processor(target_processor(t)) ? known_ : unknown_).push_back(t);
    jobs_at_start_ = executor.jobs();
    deaths_at_start_ = executor.worker_deaths();
    if (options.progress) executor.set_progress([this](int done, int planned) { tick(done, planned); });
  }
  ~ProbeRun() {
    if (options_.progress) executor_.set_progress(nullptr);
  }

  // Phase 1 alone, for declarations that are not a catalog's (the census's candidate instantiations).
  std::vector<ResolveOutcome> resolve_only() {
    resolve_declarations();
    std::vector<ResolveOutcome> out;
    for (const auto& k : keys_) {
      ResolveOutcome o;
      o.resolution = k.resolution;
      if (k.resolve_death) {
        o.died = true;
        o.resolution.kind = Resolution::Kind::kProbeError;
        o.resolution.evidence = "LLVM died reading the declaration: " + outcome_of_death(*k.resolve_death, options_.timeout_s).evidence();
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
    timed("resolve", [&] { resolve_phase(); });
    timed("compile", [&] { compile_phase(); });
    timed("retry+baseline", [&] { retry_and_baseline_phase(); });
    timed("posings", [&] { posing_phase(); });
    timed("selection", [&] { selection_phase(); });
    timed("object", [&] { object_phase(); });
    ProbeResult result = assemble_column();
    stats_.workers = executor_.workers();
    stats_.jobs = executor_.jobs() - jobs_at_start_;
    stats_.worker_deaths = executor_.worker_deaths() - deaths_at_start_;
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

  void tick(int done, int planned) {
    std::fprintf(stderr, "\r\033[K%s: %s %d/%d  (%d workers, %d worker restarts)", options_.flavor.c_str(), phase_,
                 done, planned, executor_.workers(), executor_.worker_deaths() - deaths_at_start_);
    std::fflush(stderr);
  }

  // ---- compiling: every kernel's latest attempt is kept by (target, function) ----

  static Kernel kernel(const std::string& target, const std::string& function, std::string ir, const std::string& declare) {
    return Kernel{target, function, std::move(ir), declare};
  }

  Kernel probe_kernel(const KeyState& k, const std::string& target, const std::string& function, const Posing& posing) const {
    return kernel(target, function, probe_kernel_ir(function, k.resolution.shape, posing), k.resolution.shape.declare_line);
  }

  CompileHow batches(bool retry = false) const {
    CompileHow how;
    how.batch = static_cast<size_t>(std::max(1, options_.batch_size));
    how.retry = retry;
    return how;
  }
  // A retry: alone, in a fresh worker, with the retry's budget.
  static CompileHow alone(bool serial) {
    CompileHow how;
    how.serial = serial;
    how.batch = 1;
    how.retry = true;
    how.fresh = true;
    return how;
  }

  // Compiles the runs at once; a kernel's attempt replaces an earlier one of the same (target, function).
  void compile(std::vector<CompileRun> runs) {
    std::vector<std::vector<std::pair<std::string, std::string>>> names(runs.size());
    bool any = false;
    for (size_t r = 0; r < runs.size(); ++r) {
      for (const Kernel& k : runs[r].kernels) names[r].push_back({k.target, k.function});
      any |= !runs[r].kernels.empty();
    }
    if (!any) return;
    std::vector<std::vector<Attempt>> attempts = executor_.compile(std::move(runs));
    for (size_t r = 0; r < attempts.size(); ++r)
      for (size_t i = 0; i < attempts[r].size(); ++i) {
        Attempt& a = attempts[r][i];
        if (a.report) stats_.slowest_answer_cpu_ms = std::max(stats_.slowest_answer_cpu_ms, a.report->cpu_ms);
        attempts_[names[r][i].first][names[r][i].second] = std::move(a);
      }
  }

  const Attempt* find_attempt(const std::string& target, const std::string& function) const {
    auto t = attempts_.find(target);
    if (t == attempts_.end()) return nullptr;
    auto f = t->second.find(function);
    return f == t->second.end() ? nullptr : &f->second;
  }
  Attempt& attempt(const std::string& target, const std::string& function) { return attempts_[target][function]; }

  Outcome outcome(const Attempt& a) const { return outcome_of(a, options_.timeout_s); }
  Status status_of(const std::string& target, const std::string& function) const {
    const Attempt* a = find_attempt(target, function);
    return a ? outcome(*a).status : Status::kProbeError;
  }

  // ---- phase 1: resolve ----

  void resolve_phase() {
    resolve_declarations();
    for (const auto& k : keys_) {
      if (k.resolved_reported && k.resolution.kind == Resolution::Kind::kCatalogError)
        throw input_error(catalog_.path + ":" + std::to_string(k.spec->line) + ": key '" + k.entry->key +
                          "': " + k.resolution.evidence);
    }
    for (auto& k : keys_)
      if (resolved(k)) k.baseline = baseline_for(k, default_posing(k));
    if (!options_.keep_ir_dir.empty()) keep_ir();
  }

  void resolve_declarations() {
    phase_ = "resolving";
    std::vector<size_t> all(keys_.size());
    for (size_t i = 0; i < keys_.size(); ++i) all[i] = i;
    resolve(all, false);
    for (int round = 0; round < options_.retries; ++round) {
      std::vector<size_t> again;
      for (size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i].resolve_death) again.push_back(i);
      if (again.empty()) break;
      stats_.retried += static_cast<int>(again.size());
      resolve(again, true);
    }
  }

  void resolve(const std::vector<size_t>& indices, bool serial) {
    std::vector<DeclSpec> specs;
    for (size_t i : indices) specs.push_back(*keys_[i].spec);
    std::vector<ResolveAttempt> attempts = executor_.resolve(specs, serial);
    for (size_t n = 0; n < indices.size(); ++n) {
      KeyState& k = keys_[indices[n]];
      if (attempts[n].resolution) {
        k.resolved_reported = true;
        k.resolve_death.reset();
        k.resolution = *attempts[n].resolution;
      } else if (attempts[n].death) {
        k.resolve_death = attempts[n].death;
      }
    }
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

  // The baseline kernel of a posing, where one was made ("" otherwise).
  std::string existing_baseline(const KeyState& k, const Posing& posing) const {
    auto it = baseline_by_signature_.find(baseline_signature(k.resolution.shape, posing));
    return it == baseline_by_signature_.end() ? "" : it->second;
  }

  // The baseline kernel of `function` on `target`, unless it is compiled (or handed out) already.
  std::optional<Kernel> baseline_kernel(const std::string& target, const std::string& function) {
    if (!baselines_submitted_.insert({target, function}).second) return std::nullopt;
    return kernel(target, function, baseline_ir_.at(function), "");
  }

  Posing default_posing(const KeyState& k) const {
    if (options_.call) return probe_posing(k.resolution.shape, *options_.call, k.resolution.default_imm);
    return archdb::default_posing(k.resolution.shape, k.resolution.default_imm);
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
        text += probe_kernel_ir(k.function, k.resolution.shape, default_posing(k));
        text += baseline_ir_.at(k.baseline);
      } else if (k.spec->kind == DeclSpec::Kind::kDeclare) {
        text += "; not probed: " + k.resolution.evidence + "\n" + k.spec->declare_text + "\n";
      } else {
        text += "; not probed: " + k.resolution.evidence + "\n";
      }
      std::string file = k.entry->key + (k.wave64.value_or(false) ? ".wave64.ll" : ".ll");
      write_file_atomically(std::filesystem::path(options_.keep_ir_dir) / file, text);
    }
  }

  // ---- phase 2: every probe kernel, posed the default way ----

  void compile_phase() {
    std::vector<Kernel> kernels;
    for (const auto& target : known_)
      for (const auto& k : keys_)
        if (resolved(k) && k.measures(target)) kernels.push_back(probe_kernel(k, target, k.function, default_posing(k)));
    phase_ = "probing";
    compile({{std::move(kernels), batches()}});
  }

  // ---- phase 3: retries of non-answers, and the baselines beside them ----

  // The probe kernels whose latest attempt is a non-answer, posed again.
  std::vector<Kernel> retry_kernels() const {
    std::vector<Kernel> out;
    for (const auto& k : keys_) {
      if (!resolved(k)) continue;
      for (const auto& target : known_)
        if (find_attempt(target, k.function) && is_toolchain_failure(status_of(target, k.function)))
          out.push_back(probe_kernel(k, target, k.function, default_posing(k)));
    }
    return out;
  }

  // Baselines where a probe lowered that are not compiled yet.
  std::vector<Kernel> baseline_kernels() {
    std::vector<Kernel> out;
    for (const auto& k : keys_) {
      if (!resolved(k)) continue;
      for (const auto& target : known_)
        if (find_attempt(target, k.function) && status_of(target, k.function) == Status::kOk)
          if (auto b = baseline_kernel(target, k.baseline)) out.push_back(std::move(*b));
    }
    return out;
  }

  // Retries run one at a time, each kernel alone in a fresh worker. The baselines, which do not depend on
  // them, run beside them on the other workers, unless a retry is a timeout: a budget is judged with
  // nothing else running.
  void retry_and_baseline_phase() {
    for (int round = 0; round < options_.retries; ++round) {
      std::vector<Kernel> retries = retry_kernels();
      if (retries.empty()) break;
      bool timeouts = std::any_of(retries.begin(), retries.end(), [&](const Kernel& k) {
        return status_of(k.target, k.function) == Status::kToolchainTimeout;
      });
      phase_ = "retrying";
      if (options_.parallel_crash_retries)
        retry_crashes_in_parallel(std::move(retries), round == 0);
      else
        retry_serially(std::move(retries), round == 0 && !timeouts ? baseline_kernels() : std::vector<Kernel>{});
    }
    // The baselines of probes that lowered on the retry. (A probe that ran out of its budget and was refused
    // on the retry is posed again like any other refusal, so that its cell does not depend on how loaded the
    // machine was on the first attempt.)
    std::vector<Kernel> baselines = baseline_kernels();
    if (baselines.empty()) return;
    phase_ = "baselines";
    compile({{std::move(baselines), batches()}});
  }

  // Retries of kernels that crashed or hung, as the retry phase runs them.
  void retry_now(std::vector<Kernel> retries) {
    if (options_.parallel_crash_retries)
      retry_crashes_in_parallel(std::move(retries), false);
    else
      retry_serially(std::move(retries), {});
  }

  // Each retry alone in a fresh serial worker, one at a time; `baselines` meanwhile on the parallel workers.
  void retry_serially(std::vector<Kernel> retries, std::vector<Kernel> baselines) {
    stats_.retried += static_cast<int>(retries.size());
    compile({{std::move(retries), alone(true)}, {std::move(baselines), batches(true)}});
  }

  // Crashes are retried each alone in a job of its own on the parallel workers, beside the baselines (a
  // crash does not depend on what runs beside it); timeouts then one at a time with nothing else running.
  void retry_crashes_in_parallel(std::vector<Kernel> retries, bool with_baselines) {
    stats_.retried += static_cast<int>(retries.size());
    std::vector<Kernel> crashes, timeouts;
    for (Kernel& k : retries)
      (status_of(k.target, k.function) == Status::kToolchainTimeout ? timeouts : crashes).push_back(std::move(k));
    if (options_.parallel_timeout_retries) {
      for (Kernel& k : timeouts) crashes.push_back(std::move(k));
      timeouts.clear();
    }
    compile({{std::move(crashes), alone(false)},
             {with_baselines ? baseline_kernels() : std::vector<Kernel>{}, batches(true)}});
    compile({{std::move(timeouts), alone(true)}});
  }

  // ---- phase 4: other posings, where the default one was refused, became no instruction or was rejected ----

  // The search a cell's default attempt calls for, if any.
  std::unique_ptr<PosingSearch> search_for(const KeyState& k, const std::string& target) const {
    const Attempt* a = find_attempt(target, k.function);
    if (!a) return nullptr;
    Outcome o = outcome(*a);
    const ProbeShape& shape = k.resolution.shape;
    if (o.status == Status::kArchAbsent) return refusal_search(shape, default_posing(k), o, options_.immarg_sweep);
    if (o.status == Status::kOk) {
      const Attempt* base = find_attempt(target, k.baseline);
      bool baseline = base && base->report;
      std::vector<std::string> became =
          baseline ? lowered_mnemonics(a->report->mnemonics, base->report->mnemonics) : std::vector<std::string>{};
      if (baseline && became.empty())
        return lowering_search(PosingSearch::Why::kNoInstruction, shape, default_posing(k), options_.immarg_sweep);
      // No posing makes the assembler accept what a processor's every kernel has and it has not (target_defect).
      if (!a->report->mc_errors.empty() && !names_missing_instruction(a->report->mc_errors, became) &&
          executor_.target_defect(target).empty())
        return lowering_search(PosingSearch::Why::kRejectedAssembly, shape, default_posing(k), options_.immarg_sweep);
      return nullptr;
    }
    // Retried already. One way of posing the call crashes instruction selection; another may lower (an image
    // load that returns its fail status, posed with texfailctrl 0). A crash after selection (finalizing it,
    // branch relaxation, the hazard recognizer, the printer) is about the instruction selected, which other
    // immediates do not change: not posed again.
    if (o.status == Status::kToolchainCrash && o.crashed_selecting())
      return lowering_search(PosingSearch::Why::kCrashed, shape, default_posing(k), options_.immarg_sweep, &o);
    return nullptr;
  }

  static std::string posing_function(const KeyState& k, size_t index) { return k.function + "_q" + std::to_string(index); }

  // Tried in rounds, each open search one posing a round, until one decides it (docs/measuring.md "How the probe
  // measures").
  void posing_phase() {
    if (options_.call) return;  // the call as posed, and no other way
    std::vector<OpenSearch> searches;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (!resolved(keys_[i])) continue;
      for (const auto& target : known_)
        if (keys_[i].measures(target))
          if (auto search = search_for(keys_[i], target)) searches.push_back({i, target, std::move(search)});
    }
    phase_ = "posings";
    struct Proposed {
      OpenSearch* open;
      PosingSearch::Proposal proposal;
      std::string function;
    };
    for (;;) {
      std::vector<Proposed> round;
      std::vector<Kernel> kernels;
      for (OpenSearch& s : searches) {
        std::optional<PosingSearch::Proposal> p = s.search->next();
        if (!p) continue;
        const KeyState& k = keys_[s.key];
        std::string fn = posing_function(k, p->index);
        kernels.push_back(probe_kernel(k, s.target, fn, p->posing));
        round.push_back({&s, std::move(*p), fn});
      }
      if (kernels.empty()) break;
      stats_.sweep_probes += static_cast<int>(kernels.size());
      for (const Proposed& p : round) {
        switch (p.open->search->why()) {
          case PosingSearch::Why::kRefused: ++stats_.posed_refused; break;
          case PosingSearch::Why::kNoInstruction: ++stats_.posed_no_instruction; break;
          case PosingSearch::Why::kRejectedAssembly: ++stats_.posed_rejected; break;
          case PosingSearch::Why::kCrashed: ++stats_.posed_crashed; break;
        }
      }
      compile({{std::move(kernels), batches()}});
      // A posing that asks for work and makes LLVM hang decides a lowering search (posing_search.h): it is
      // probed once more first, as every non-answer is, so that a busy machine does not decide it.
      std::vector<Kernel> retries;
      for (const Proposed& p : round)
        if (p.open->search->retries_hangs() && status_of(p.open->target, p.function) == Status::kToolchainTimeout)
          retries.push_back(probe_kernel(keys_[p.open->key], p.open->target, p.function, p.proposal.posing));
      if (!retries.empty()) retry_now(std::move(retries));
      // Posings whose baseline differs from the default's (uniform operands, an unused result) need theirs.
      std::vector<Kernel> baselines;
      for (const Proposed& p : round)
        if (status_of(p.open->target, p.function) == Status::kOk)
          if (auto b = baseline_kernel(p.open->target, baseline_for(keys_[p.open->key], p.proposal.posing)))
            baselines.push_back(std::move(*b));
      compile({{std::move(baselines), batches()}});
      for (const Proposed& p : round) judge(*p.open, p.proposal.posing, p.function);
    }
    // Asked for work every way, LLVM found none that lowers and crashed on one: that crash (retried, as every
    // non-answer is) is what a kernel using the intrinsic for anything meets.
    std::vector<Kernel> retries;
    for (const OpenSearch& s : searches) {
      const auto& crash = s.search->first_crash();
      if (s.search->decided() || !crash || s.search->why() == PosingSearch::Why::kCrashed) continue;
      const KeyState& k = keys_[s.key];
      std::string fn = posing_function(k, crash->index);
      solutions_[{s.key, s.target}] = {crash->posing, fn};
      retries.push_back(probe_kernel(k, s.target, fn, crash->posing));
    }
    if (!retries.empty()) {
      retry_now(std::move(retries));
      for (const OpenSearch& s : searches) {
        auto solution = solutions_.find({s.key, s.target});
        // A crash the retry does not repeat was the machine's, not LLVM's: the search found nothing.
        if (!s.search->decided() && solution != solutions_.end() &&
            !is_toolchain_failure(status_of(s.target, solution->second.second)))
          solutions_.erase(solution);
      }
    }
    for (OpenSearch& s : searches)
      if (!s.search->tried().empty()) tried_posings_[{s.key, s.target}] = s.search->tried();
  }

  void judge(OpenSearch& s, const Posing& posing, const std::string& function) {
    const KeyState& k = keys_[s.key];
    Attempt& a = attempt(s.target, function);
    Trial trial;
    trial.outcome = outcome(a);
    if (trial.outcome.status == Status::kOk) {
      const Attempt* base = find_attempt(s.target, baseline_for(k, posing));
      trial.instruction = base && base->report && !lowered_mnemonics(a.report->mnemonics, base->report->mnemonics).empty();
      trial.assembled = a.report->mc_errors.empty();
    }
    s.search->judge(trial);
    if (s.search->decided()) {
      solutions_[{s.key, s.target}] = {posing, function};
    } else if (a.report) {
      // A posing that decided nothing is never read for what it became again (only for how it ended, should
      // it be the search's first crash): its instructions go. Most of the census's posing kernels are such.
      std::vector<std::string>().swap(a.report->mnemonics);
    }
  }

  // ---- phase 5: what LLVM selected, where it crashed after selecting ----

  // The posing of the function that decided a cell: its probe's default, or the posing search's.
  Posing decided_posing(size_t key, const std::string& target) const {
    auto solution = solutions_.find({key, target});
    return solution != solutions_.end() ? solution->second.first : default_posing(keys_[key]);
  }

  // A crash after instruction selection (branch relaxation, the hazard recognizer, the printer) is often LLVM
  // selecting an instruction the processor has no encoding for and failing to ask its size: the kernel and its
  // baseline are compiled again up to the end of selection, and their opcodes judged by LLVM's tables
  // (encodings.h); where LLVM crashes expanding its pseudo-instructions (finalize-isel), up to just before that.
  // In fresh workers, so that what is selected does not depend on what ran before.
  void selection_phase() {
    std::vector<Kernel> kernels;
    std::set<std::pair<std::string, std::string>> baselines;
    for_each_deciding_attempt([&](size_t i, const KeyState& k, const std::string& target, const std::string& fn,
                                  const Attempt& a) {
      Outcome o = outcome(a);
      if (o.status != Status::kToolchainCrash || o.crashed_selecting()) return;
      Posing posing = decided_posing(i, target);
      kernels.push_back(probe_kernel(k, target, selection_of(fn), posing));
      std::string base = selection_of(baseline_for(k, posing));
      if (baselines.insert({target, base}).second)
        kernels.push_back(kernel(target, base, baseline_kernel_ir(base, k.resolution.shape, posing), ""));
    });
    phase_ = "selection";
    std::vector<Kernel> again = kernels;  // should LLVM crash expanding its pseudo-instructions
    compile({{std::move(kernels), selecting(Job::Selection::kAfterFinalize)}});
    std::vector<Kernel> before;
    for (Kernel& k : again)
      if (find_attempt(k.target, k.function)->death) before.push_back(std::move(k));
    compile({{std::move(before), selecting(Job::Selection::kBeforeFinalize)}});
  }

  // Large batches: each job is a fork of its own, and a selection rarely kills its worker.
  static CompileHow selecting(Job::Selection selection) {
    CompileHow how;
    how.batch = 64;
    how.selection = selection;
    how.fresh = true;
    return how;
  }

  static std::string selection_of(const std::string& function) { return function + "_sel"; }

  // ---- phase 6: objects for what the MC assembler rejected ----

  // The function that lowered a cell: its probe, or the posing that decided it.
  std::string lowered_function(size_t key, const std::string& target) const {
    auto solution = solutions_.find({key, target});
    return solution != solutions_.end() ? solution->second.second : keys_[key].function;
  }

  // Each resolved key's deciding attempt on each known target, where there is one: visit(key index, key, target,
  // the attempt's function, the attempt). The phases after the posings look again only at these.
  template <typename Visit>
  void for_each_deciding_attempt(Visit visit) const {
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeyState& k = keys_[i];
      if (!resolved(k)) continue;
      for (const auto& target : known_) {
        std::string fn = lowered_function(i, target);
        if (const Attempt* a = find_attempt(target, fn)) visit(i, k, target, fn, *a);
      }
    }
  }

  void object_phase() {
    std::vector<Kernel> kernels;
    for_each_deciding_attempt([&](size_t i, const KeyState& k, const std::string& target, const std::string& fn,
                                  const Attempt& a) {
      if (outcome(a).status != Status::kOk || a.report->mc_errors.empty()) return;
      if (!executor_.target_defect(target).empty()) return;  // no object decides there (decide.h)
      kernels.push_back(probe_kernel(k, target, fn + "_obj", decided_posing(i, target)));
    });
    phase_ = "objects";
    CompileHow objects = batches();
    objects.emit_object = true;
    compile({{std::move(kernels), objects}});
  }

  // ---- LLVM's own declaration (LLVM 23 on), beside what was measured ----

  std::optional<DeclaredSupport> declared_support(const KeyState& k, const std::string& target) const {
    if (!compat::declares_intrinsic_features() || !resolved(k)) return std::nullopt;
    llvm::Intrinsic::ID id = compat::lookup_intrinsic_id(k.resolution.intrinsic);
    if (id == llvm::Intrinsic::not_intrinsic) return std::nullopt;
    std::optional<std::string> expression = compat::required_target_features(id);
    if (!expression) return std::nullopt;
    auto& subtarget = subtargets_[target];
    if (!subtarget)
      subtarget.reset(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), target_processor(target),
                                                    target_features(target)));
    std::optional<bool> holds = subtarget ? compat::satisfies_features(*subtarget, *expression) : std::nullopt;
    if (!holds) return std::nullopt;
    return DeclaredSupport{*expression, *holds};
  }

  // ---- the column ----

  ProbeResult assemble_column() {
    ProbeResult result;
    result.column.provenance = probe_provenance(options_);
    for (const auto& k : keys_) {
      std::vector<Cell> cells;
      for (const auto& target : options_.targets)
        if (k.measures(target)) cells.push_back(cell_for(k, target));
      decide_crashes_from_lowerings(k, cells);
      for (Cell& c : cells) {
        if (c.status == Status::kProbeError) result.probe_errors.push_back(k.entry->key + "/" + c.target + ": " + c.evidence);
        result.column.cells.push_back(std::move(c));
      }
    }
    result.column.sort();
    result.column.recount();
    return result;
  }

  // A crash or hang before anything was selected, decided where the same call lowers elsewhere (decide.h).
  void decide_crashes_from_lowerings(const KeyState& k, std::vector<Cell>& cells) {
    size_t key = static_cast<size_t>(&k - keys_.data());
    std::vector<Cell*> all;
    for (Cell& c : cells) all.push_back(&c);
    auto undecided = [&](const Cell& c) {
      const Attempt* selection = find_attempt(c.target, selection_of(lowered_function(key, c.target)));
      return !(selection && selection->report && !selection->report->selected.empty());
    };
    decide_from_lowerings(all, undecided, [&](const std::string& target, const std::string& mnemonic) {
      return executor_.mnemonic_refusal(target, mnemonic);
    });
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
      in.solution_baseline = find_attempt(target, existing_baseline(k, *in.solution));
    }
    in.baseline = find_attempt(target, k.baseline);
    in.object = find_attempt(target, lowered_function(key, target) + "_obj");
    in.selection = find_attempt(target, selection_of(lowered_function(key, target)));
    in.baseline_selection = find_attempt(target, selection_of(existing_baseline(k, decided_posing(key, target))));
    if (in.target_known) {
      in.target_defect = executor_.target_defect(target);
      in.declared = declared_support(k, target);
    }
    return decide_cell(in);
  }

  const Catalog& catalog_;
  const ProbeOptions& options_;
  Executor& executor_;
  std::string label_;
  std::vector<KeyState> keys_;
  std::vector<std::string> known_, unknown_;
  int jobs_at_start_ = 0, deaths_at_start_ = 0;
  std::map<std::string, std::string> baseline_ir_;
  std::map<std::string, std::map<std::string, Attempt>> attempts_;  // target -> function -> its latest attempt
  // (key, target) -> the posing that decided it and its kernel; every posing tried beyond the default.
  std::map<std::pair<size_t, std::string>, std::pair<Posing, std::string>> solutions_;
  std::map<std::pair<size_t, std::string>, std::vector<Posing>> tried_posings_;
  std::map<std::string, std::string> baseline_by_signature_;  // baseline signature -> its kernel
  std::set<std::pair<std::string, std::string>> baselines_submitted_;  // (target, baseline function)
  ProbeStats stats_;
  const char* phase_ = "probing";
  mutable std::map<std::string, std::unique_ptr<llvm::MCSubtargetInfo>> subtargets_;  // for LLVM's declarations
};

ExecutorOptions executor_options(const ProbeOptions& options, const std::vector<std::string>& targets) {
  ExecutorOptions e;
  for (const auto& t : targets)
    if (knows_processor(target_processor(t))) e.targets.push_back(t);
  e.jobs = options.jobs;
  e.timeout_s = options.timeout_s;
  e.cpu_budget_ms = options.cpu_budget_ms;
  e.retry_cpu_budget_ms = options.retry_cpu_budget_ms;
  e.immarg_sweep = options.immarg_sweep;
  e.strict_isolation = options.strict_isolation;
  e.hang_first_attempt_only = options.inject_hang_first_attempt_only;
  return e;
}

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

std::unique_ptr<Executor> probe_executor(const ProbeOptions& options, const std::vector<std::string>& targets) {
  return make_pool_executor(executor_options(options, targets));
}

ProbeResult run_probe(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries,
                      const ProbeOptions& options, Executor& executor) {
  initialize_amdgpu();
  ProbeRun run(catalog, entries, options, executor);
  return run.run();
}

ProbeResult run_probe(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries,
                      const ProbeOptions& options) {
  initialize_amdgpu();
  auto start = Clock::now();
  ExecutorOptions e = executor_options(options, options.targets);
  if (!options.inject_hang_key.empty())
    for (size_t i = 0, state = 0; i < entries.size(); state += entries[i]->wave64 ? 2 : 1, ++i)  // ProbeRun's states
      if (entries[i]->key == options.inject_hang_key) e.hang_function = probe_function(state);
  std::unique_ptr<Executor> executor = make_pool_executor(e);
  double set_up = std::chrono::duration<double>(Clock::now() - start).count();
  ProbeResult result = run_probe(catalog, entries, options, *executor);
  result.stats.phases.insert(result.stats.phases.begin(), {"set-up", set_up});
  result.stats.seconds += set_up;
  return result;
}

std::vector<ResolveOutcome> resolve_declarations(const std::vector<DeclSpec>& specs, const ProbeOptions& options,
                                                 Executor& executor) {
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
  ProbeRun run(catalog, entries, resolving, executor);
  return run.resolve_only();
}

std::vector<ResolveOutcome> resolve_declarations(const std::vector<DeclSpec>& specs, const ProbeOptions& options) {
  std::unique_ptr<Executor> executor = probe_executor(options, {});
  return resolve_declarations(specs, options, *executor);
}

}  // namespace archdb
