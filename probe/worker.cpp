// probe/worker.cpp — the child side of a forked worker (see worker.h, job.h).
#include "probe/worker.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include <llvm/AsmParser/Parser.h>
#include <llvm/CodeGen/MachineFunction.h>
#include <llvm/CodeGen/MachineFunctionPass.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetInstrInfo.h>
#include <llvm/CodeGen/TargetSubtargetInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Pass.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/PrettyStackTrace.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "probe/asm_text.h"
#include "probe/classify.h"
#include "probe/assemble.h"
#include "probe/encodings.h"
#include "llvm/llvm_compat.h"
#include "probe/resolve.h"
#include "probe/synth.h"
#include "llvm/toolchain.h"

namespace archdb {
namespace {

int g_out = -1;
int g_timeout_s = kDefaultTimeoutS;
int g_cpu_budget_ms = 0;
timespec g_budget_start{};  // this process's CPU time when the current kernel's budgets started

// Lowering refusals recovered inside this worker (see run_compile). Set while a compile runs under a
// CrashRecoveryContext that may be unwound.
bool g_may_recover = false;
const std::map<std::string, int>* g_item_ids = nullptr;
std::set<std::string>* g_finished = nullptr;
int g_abandoned = 0;  // compiles unwound by a refusal in this worker's life
constexpr int kMaxAbandonedCompiles = 128;
constexpr int kArenaHeapBytes = 64 << 20;  // glibc's largest heap of a thread's arena on 64-bit

void write_all(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(g_out, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      ::_exit(1);  // the parent is gone
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void send(const Report& report) {
  std::string s = encode_report(report);
  write_all(s.data(), s.size());
}

// ---- Last words: written from signal and fatal-error handlers, so no allocation of our own here. ----

// The innermost pass and function of LLVM's pretty stack ("Running pass 'X' on function '@f'").
void innermost_pass(char* pass, size_t pass_cap, char* function, size_t fn_cap) {
  pass[0] = function[0] = 0;
  auto* entry = static_cast<const llvm::PrettyStackTraceEntry*>(llvm::SavePrettyStackState());
  for (; entry && (!pass[0] || !function[0]); entry = entry->getNextEntry()) {
    llvm::SmallString<512> text;
    llvm::raw_svector_ostream os(text);
    entry->print(os);
    llvm::StringRef t = os.str();
    size_t p = t.find("Running pass '");
    if (!pass[0] && p != llvm::StringRef::npos) {
      llvm::StringRef rest = t.substr(p + 14);
      llvm::StringRef name = rest.substr(0, rest.find('\''));
      std::snprintf(pass, pass_cap, "%.*s", static_cast<int>(name.size()), name.data());
    }
    size_t f = t.find("on function '");
    if (!function[0] && f != llvm::StringRef::npos) {
      llvm::StringRef rest = t.substr(f + 13);
      llvm::StringRef name = rest.substr(0, rest.find('\''));
      if (name.starts_with("@")) name = name.drop_front();
      if (name.starts_with("\"") && name.ends_with("\"") && name.size() >= 2) name = name.drop_front().drop_back();
      std::snprintf(function, fn_cap, "%.*s", static_cast<int>(name.size()), name.data());
    }
  }
}

void last_words(EndKind how, const char* message, int budget = 0) {
  static char buf[8192];
  static char pass[256], function[256];
  innermost_pass(pass, sizeof pass, function, sizeof function);
  write_all(buf, encode_last_words(buf, sizeof buf, how, function, pass, message, budget));
}

// The MC cross-check runs under a recovery context of its own: LLVM failing to assemble what codegen
// printed is the cross-check's finding, not the end of the worker.
bool g_in_cross_check = false;
std::string* g_cross_check_failure = nullptr;

void on_fatal_error(void*, const char* reason, bool) {
  if (g_in_cross_check && llvm::CrashRecoveryContext::GetCurrent()) {
    *g_cross_check_failure = reason;
    g_in_cross_check = false;
    llvm::CrashRecoveryContext::GetCurrent()->HandleExit(kWorkerExitFatal);
  }
  // A lowering refusal ("Cannot select", "not supported on this subtarget"...) inside one of our kernels is
  // LLVM's answer for that kernel: report it and unwind to run_compile, which goes on without it. Anything
  // else LLVM finds fatal ends this worker.
  if (g_may_recover && llvm::CrashRecoveryContext::GetCurrent() && is_lowering_refusal(reason)) {
    char pass[256], function[256];
    innermost_pass(pass, sizeof pass, function, sizeof function);
    auto id = g_item_ids->find(function);
    bool in_cross_check = std::strstr(pass, "MC cross-check") != nullptr;
    if (id != g_item_ids->end() && !in_cross_check && !g_finished->count(function)) {
      g_finished->insert(function);
      CompileReport report;
      report.id = id->second;
      report.function = function;
      report.refused = reason;
      report.refused_pass = pass;
      send(report);
      llvm::CrashRecoveryContext::GetCurrent()->HandleExit(kWorkerExitFatal);
    }
  }
  last_words(EndKind::kFatal, reason);
  ::_exit(kWorkerExitFatal);
}

void on_bad_alloc(void*, const char* reason, bool) {
  last_words(EndKind::kSignal, "out of memory");
  ::_exit(kWorkerExitFatal);
}

void on_crash_signal(int sig) {
  char name[32];
  std::snprintf(name, sizeof name, "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  last_words(EndKind::kSignal, name);
  ::raise(sig);  // the handler was reset: the parent sees the real signal
}

void on_alarm(int) {
  last_words(EndKind::kTimeout, "", g_timeout_s);
  ::_exit(kWorkerExitTimeout);
}

void on_cpu_budget(int) {
  last_words(EndKind::kCpuBudget, "", g_cpu_budget_ms);
  ::_exit(kWorkerExitTimeout);
}

// A kernel's budgets start again: the wall-clock alarm and, where the job sets one, the CPU-time budget
// (ITIMER_PROF counts this process's user and system time; only the jobs' thread runs, see run_worker).
void arm_budgets() {
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &g_budget_start);
  ::alarm(static_cast<unsigned>(g_timeout_s));
  if (g_cpu_budget_ms > 0) {
    itimerval budget{};
    budget.it_value.tv_sec = g_cpu_budget_ms / 1000;
    budget.it_value.tv_usec = static_cast<suseconds_t>(g_cpu_budget_ms % 1000) * 1000;
    ::setitimer(ITIMER_PROF, &budget, nullptr);
  }
}

// CPU time spent since the budgets were last armed, as ITIMER_PROF counts it.
double budget_spent_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec - g_budget_start.tv_sec) * 1e3 +
         static_cast<double>(now.tv_nsec - g_budget_start.tv_nsec) / 1e6;
}

// The signals of the budgets' timers, which are the process's: see run_worker.
sigset_t budget_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGALRM);
  sigaddset(&set, SIGPROF);
  return set;
}

void disarm_budgets() {
  ::alarm(0);
  itimerval none{};
  ::setitimer(ITIMER_PROF, &none, nullptr);
}

void install_handlers() {
  // Lowering refusals unwind through LLVM's own crash-recovery context; its signal handlers are replaced
  // by ours just below, so a real crash still ends the worker.
  llvm::CrashRecoveryContext::Enable();
  static char alt_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_crash_signal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS}) ::sigaction(sig, &sa, nullptr);
  struct sigaction alarm {};
  alarm.sa_handler = on_alarm;
  alarm.sa_flags = SA_ONSTACK;
  sigemptyset(&alarm.sa_mask);
  ::sigaction(SIGALRM, &alarm, nullptr);
  struct sigaction cpu {};
  cpu.sa_handler = on_cpu_budget;
  cpu.sa_flags = SA_ONSTACK;
  sigemptyset(&cpu.sa_mask);
  ::sigaction(SIGPROF, &cpu, nullptr);
  llvm::install_fatal_error_handler(on_fatal_error);
  llvm::install_bad_alloc_error_handler(on_bad_alloc);
}

// ---- Resolve jobs ----

void run_resolve(const Job& job, const std::string& flavor_label) {
  for (const auto& item : job.items) {
    ::alarm(static_cast<unsigned>(g_timeout_s));
    send(ResolveReport{item.id, resolve_declaration(item.spec, flavor_label, job.immarg_sweep)});
  }
  ::alarm(0);
}

// ---- Compile jobs ----

// Errors LLVM reports through the context's diagnostic handler do not stop codegen; they are answers.
struct DiagnosticState {
  std::map<std::string, std::string> first_error;  // function -> message
  std::vector<std::string> unattributed;
};

std::string diagnostic_text(const llvm::DiagnosticInfo& info) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  info.print(printer);
  os.flush();
  // "<unknown>:0:0: in function p3 void (ptr addrspace(1), i32): <message>" -> "<message>"
  size_t in_fn = text.find("in function ");
  if (in_fn != std::string::npos) {
    size_t colon = text.find(": ", in_fn);
    if (colon != std::string::npos) text = text.substr(colon + 2);
  }
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  return text;
}

void on_diagnostic(const llvm::DiagnosticInfo* info, void* context) {
  if (info->getSeverity() != llvm::DS_Error) return;
  auto* state = static_cast<DiagnosticState*>(context);
  char pass[256], function[256];
  innermost_pass(pass, sizeof pass, function, sizeof function);
  std::string msg = diagnostic_text(*info);
  if (function[0]) state->first_error.emplace(function, msg);
  else state->unattributed.push_back(msg);
}

// Names the function whose assembly is being cross-checked, should the MC layer crash.
class CrossCheckStackEntry : public llvm::PrettyStackTraceEntry {
 public:
  explicit CrossCheckStackEntry(llvm::StringRef function) : function_(function) {}
  void print(llvm::raw_ostream& os) const override {
    os << "Running pass 'MC cross-check (re-assembly)' on function '@" << function_ << "'\n";
  }

 private:
  llvm::StringRef function_;
};

// Test hook (Job::hang_function): that kernel's codegen never ends, and never gets as far as deciding
// anything; the alarm ends the worker.
class InjectedHangPass : public llvm::FunctionPass {
 public:
  static char ID;
  explicit InjectedHangPass(std::string function) : llvm::FunctionPass(ID), function_(std::move(function)) {}
  llvm::StringRef getPassName() const override { return "archdb: injected hang"; }
  bool runOnFunction(llvm::Function& f) override {
    if (f.getName() == function_)
      for (;;) ::pause();
    return false;
  }

 private:
  std::string function_;
};
char InjectedHangPass::ID = 0;

// Runs right after the AsmPrinter, once per function: cuts the function's text out of the stream,
// cross-checks it with the MC assembler and reports the item.
class ReportFunctionPass : public llvm::FunctionPass {
 public:
  static char ID;
  ReportFunctionPass(const Job& job, const llvm::SmallString<0>& text, const Assembler& assembler,
                     DiagnosticState& diagnostics)
      : llvm::FunctionPass(ID), job_(job), text_(text), assembler_(assembler), diagnostics_(diagnostics) {
    for (const auto& item : job.items) {
      ids_[item.function] = item.id;
      if (!item.declare_line.empty()) calls_.insert(item.function);
    }
  }

  llvm::StringRef getPassName() const override { return "archdb: report function"; }

  bool doInitialization(llvm::Module&) override {
    header_ = std::string(text_.data(), text_.size());  // what the AsmPrinter wrote before any function
    consumed_ = text_.size();
    return false;
  }

  bool runOnFunction(llvm::Function& f) override {
    if (f.isDeclaration()) return false;
    std::string name = f.getName().str();
    if (job_.emit_object) {
      // The object is whole only when the run ends; compile_remaining reports it then.
      arm_budgets();
      return false;
    }
    std::string chunk(text_.data() + consumed_, text_.size() - consumed_);
    consumed_ = text_.size();
    CompileReport report;
    report.id = ids_.count(name) ? ids_[name] : -1;
    report.function = name;
    report.mnemonics = function_mnemonics(chunk, name);
    // A baseline (a kernel that calls nothing) is scaffolding for the difference: only its mnemonics count.
    if (calls_.count(name)) {
      CrossCheckStackEntry entry(name);
      AssemblyResult assembled;
      std::string failure;
      const void* stack = llvm::SavePrettyStackState();
      llvm::CrashRecoveryContext recovery;
      g_cross_check_failure = &failure;
      g_in_cross_check = true;
      bool ran = recovery.RunSafely([&] { assembled = assembler_.assemble(header_ + chunk); });
      g_in_cross_check = false;
      if (!ran) {
        llvm::RestorePrettyStackState(stack);
        assembled = AssemblyResult{};
        assembled.errors.push_back("LLVM ERROR: " + failure);
      }
      report.cross_checked = true;
      report.mc_errors = assembled.errors;
      report.undefined = assembled.undefined.all;
    }
    auto diag = diagnostics_.first_error.find(name);
    if (diag != diagnostics_.first_error.end()) report.error = diag->second;
    report.cpu_ms = budget_spent_ms();  // how close an answered kernel came to its budget
    g_finished->insert(name);
    send(report);
    arm_budgets();
    return false;
  }

 private:
  const Job& job_;
  const llvm::SmallString<0>& text_;
  const Assembler& assembler_;
  DiagnosticState& diagnostics_;
  std::map<std::string, int> ids_;
  std::set<std::string> calls_;  // kernels that call a declaration (probes, not baselines)
  std::string header_;
  size_t consumed_ = 0;
};
char ReportFunctionPass::ID = 0;

// Select-only jobs: runs where codegen stops, once per function, with the function as LLVM selected it; reports
// its opcodes and which of them have no encoding on the processor (encodings.h).
class ReportSelectionPass : public llvm::MachineFunctionPass {
 public:
  static char ID;
  ReportSelectionPass(const Job& job, EncodingCheck& encodings, DiagnosticState& diagnostics)
      : llvm::MachineFunctionPass(ID), encodings_(encodings), diagnostics_(diagnostics) {
    for (const auto& item : job.items) ids_[item.function] = item.id;
  }

  llvm::StringRef getPassName() const override { return "archdb: report selection"; }

  bool runOnMachineFunction(llvm::MachineFunction& mf) override {
    std::string name = mf.getName().str();
    const llvm::TargetInstrInfo* instructions = mf.getSubtarget().getInstrInfo();
    CompileReport report;
    report.id = ids_.count(name) ? ids_[name] : -1;
    report.function = name;
    std::set<std::string> asked;
    for (const llvm::MachineBasicBlock& block : mf)
      for (const llvm::MachineInstr& mi : block) {
        if (mi.isDebugInstr()) continue;
        std::string opcode = instructions->getName(mi.getOpcode()).str();
        report.selected.push_back(opcode);
        if (!asked.insert(opcode).second) continue;
        if (auto missing = encodings_.missing(opcode)) report.unencodable.push_back(*missing);
      }
    auto diag = diagnostics_.first_error.find(name);
    if (diag != diagnostics_.first_error.end()) report.error = diag->second;
    report.cpu_ms = budget_spent_ms();
    g_finished->insert(name);
    send(report);
    arm_budgets();
    return false;
  }

 private:
  EncodingCheck& encodings_;
  DiagnosticState& diagnostics_;
  std::map<std::string, int> ids_;
};
char ReportSelectionPass::ID = 0;

// One processor's encoding checks, made when a select-only job first needs them (each asks its assembler).
EncodingCheck& encoding_check(const TargetResources& resources) {
  static std::map<const Assembler*, std::unique_ptr<EncodingCheck>> checks;
  auto& check = checks[resources.assembler];
  if (!check) check = std::make_unique<EncodingCheck>(*resources.encodings, *resources.assembler);
  return *check;
}

// Reports each of the `pending` unfinished kernels of an object job from the one object codegen wrote for them
// all. Returns false, having reported nothing, when an undefined symbol cannot be told to be one kernel's (see
// undefined_symbols_by_function).
bool report_objects(const Job& job, size_t pending, const std::string& object, const DiagnosticState& diagnostics,
                    std::set<std::string>& finished) {
  std::string error;
  UndefinedByFunction undefined = undefined_symbols_by_function(object, error);
  if (error.empty() && !undefined.unattributed.empty() && pending > 1) return false;
  for (const auto& item : job.items) {
    if (finished.count(item.function)) continue;
    CompileReport report;
    report.id = item.id;
    report.function = item.function;
    report.from_object = true;
    if (!error.empty()) {
      report.object_error = error;
    } else {
      // A kernel alone in its object owns every undefined symbol in it.
      report.undefined = pending == 1 ? undefined.all : undefined.by_function[item.function];
    }
    auto diag = diagnostics.first_error.find(item.function);
    if (diag != diagnostics.first_error.end()) report.error = diag->second;
    finished.insert(item.function);
    send(report);
  }
  return true;
}

enum class CompileEnd {
  kDone,
  kUnwound,          // a lowering refusal unwound it: compile the rest again
  kObjectAmbiguous,  // an object job's undefined symbols are not attributable: compile its kernels one by one
};

// One codegen run over the job's kernels that are not finished yet. When a lowering refusal unwinds it,
// everything it allocated is abandoned, never destroyed: after an unwind only a fresh context, module and
// pass manager are trusted.
CompileEnd compile_remaining(const Job& job, const TargetResources& resources, std::set<std::string>& finished) {
  auto* context = new llvm::LLVMContext;
  auto* diagnostics = new DiagnosticState;
  context->setDiagnosticHandlerCallBack(on_diagnostic, diagnostics);
  std::string text;
  std::set<std::string> declared = {kProbeSupportDeclare};
  text += std::string(kProbeSupportDeclare) + "\n";
  size_t pending = 0;
  for (const auto& item : job.items) {
    if (finished.count(item.function)) continue;
    ++pending;
    if (!item.declare_line.empty() && declared.insert(item.declare_line).second) text += item.declare_line + "\n";
  }
  if (pending == 0) return CompileEnd::kDone;
  for (const auto& item : job.items)
    if (!finished.count(item.function)) text += item.ir;
  llvm::SMDiagnostic parse_error;
  std::unique_ptr<llvm::Module> parsed = llvm::parseAssemblyString(text, parse_error, *context);
  if (!parsed) {
    send(JobError{"the job's module does not parse: " + parse_error.getMessage().str()});
    ::_exit(kWorkerExitJobError);
  }
  llvm::Module* module = parsed.release();
  compat::set_target_triple(*module, amdgpu_triple());
  set_probe_module_flags(*module);
  module->setDataLayout(resources.machine->createDataLayout());

  auto* assembly = new llvm::SmallString<0>;
  auto* stream = new llvm::raw_svector_ostream(*assembly);  // unbuffered: a function's text is in place when it ends
  auto* passes = new llvm::legacy::PassManager;
  if (!job.hang_function.empty()) passes->add(new InjectedHangPass(job.hang_function));
  if (job.selection != Job::Selection::kNone) {
    bool before = job.selection == Job::Selection::kBeforeFinalize;
    if (!resources.encodings || !compat::add_passes_until(*resources.machine, *passes, "finalize-isel", before)) {
      send(JobError{"this LLVM cannot stop AMDGPU codegen after instruction selection"});
      ::_exit(kWorkerExitJobError);
    }
    passes->add(new ReportSelectionPass(job, encoding_check(resources), *diagnostics));
    passes->add(llvm::createFreeMachineFunctionPass());
  } else {
    auto file_type = job.emit_object ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile;
    if (resources.machine->addPassesToEmitFile(*passes, *stream, nullptr, file_type)) {
      send(JobError{"this LLVM cannot emit AMDGPU assembly"});
      ::_exit(kWorkerExitJobError);
    }
    passes->add(new ReportFunctionPass(job, *assembly, *resources.assembler, *diagnostics));
  }

  const void* stack = llvm::SavePrettyStackState();
  llvm::CrashRecoveryContext recovery;
  arm_budgets();
  g_may_recover = job.recover_refusals;
  bool completed = recovery.RunSafely([&] { passes->run(*module); });
  g_may_recover = false;
  disarm_budgets();
  if (!completed) {
    llvm::RestorePrettyStackState(stack);  // the unwound frames' entries are gone with them
    ++g_abandoned;
    return CompileEnd::kUnwound;
  }
  if (!diagnostics->unattributed.empty()) send(UnattributedError{diagnostics->unattributed.front()});
  CompileEnd end = CompileEnd::kDone;
  if (job.emit_object &&
      !report_objects(job, pending, std::string(assembly->data(), assembly->size()), *diagnostics, finished))
    end = CompileEnd::kObjectAmbiguous;
  delete passes;
  delete stream;
  delete assembly;
  delete module;
  delete diagnostics;
  delete context;
  return end;
}

void run_compile(const Job& job, const TargetResources& resources) {
  std::map<std::string, int> ids;
  for (const auto& item : job.items) ids[item.function] = item.id;
  std::set<std::string> finished;
  g_item_ids = &ids;
  g_finished = &finished;
  CompileEnd end;
  while ((end = compile_remaining(job, resources, finished)) == CompileEnd::kUnwound) {
  }
  if (end != CompileEnd::kObjectAmbiguous) return;
  for (const auto& item : job.items) {
    if (finished.count(item.function)) continue;
    Job alone = job;
    alone.items = {item};
    while (compile_remaining(alone, resources, finished) == CompileEnd::kUnwound) {
    }
  }
}

[[noreturn]] void serve_jobs(int in_fd, int out_fd, const std::map<std::string, TargetResources>& resources,
                             const std::string& flavor_label) {
  g_out = out_fd;
  // Crashes are expected here; a core file for each would cost seconds and disk.
  struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // Codegen allocates and frees large per-function tables (one entry per register unit); glibc would map
  // each afresh and fault every page in again for the next function. Keep them in the heap instead.
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 512 << 20);
  install_handlers();
  std::string buffer;
  for (;;) {
    size_t nl;
    while ((nl = buffer.find('\n')) == std::string::npos) {
      char chunk[65536];
      ssize_t n = ::read(in_fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(0);  // the parent has no more work
      buffer.append(chunk, static_cast<size_t>(n));
    }
    Job job = decode_job(std::string_view(buffer).substr(0, nl));
    buffer.erase(0, nl + 1);
    g_timeout_s = job.timeout_s > 0 ? job.timeout_s : kDefaultTimeoutS;
    g_cpu_budget_ms = job.kind == Job::Kind::kCompile ? job.cpu_budget_ms : 0;
    if (job.kind == Job::Kind::kResolve) {
      run_resolve(job, flavor_label);
    } else {
      auto it = resources.find(job.target);
      if (it == resources.end()) {
        send(JobError{"no target machine for " + job.target});
        ::_exit(kWorkerExitJobError);
      }
      run_compile(job, it->second);
    }
    send(JobDone{});
    // Every unwound compile was abandoned, not freed: retire before that adds up. A job that asks for it ends
    // the worker too, so that none runs after it in this process.
    if (g_abandoned >= kMaxAbandonedCompiles || job.retire_after) ::_exit(0);
  }
}

struct JobThread {
  int in_fd, out_fd;
  const std::map<std::string, TargetResources>* resources;
  const std::string* flavor_label;
};

void* run_job_thread(void* arg) {
  auto* t = static_cast<JobThread*>(arg);
  sigset_t timers = budget_signals();
  ::pthread_sigmask(SIG_UNBLOCK, &timers, nullptr);
  // Before this thread's first allocation, which creates its arena's first heap.
  ::mallopt(M_TOP_PAD, kArenaHeapBytes);
  serve_jobs(t->in_fd, t->out_fd, *t->resources, *t->flavor_label);
}

}  // namespace

// The jobs run on a thread of their own while this first thread only waits. glibc gives a new thread a
// malloc arena of its own: a worker's allocations then come from fresh memory, not from the free lists of
// the heap it shares with the zygote, every page of which a write must first copy (some 750 copy-on-write
// faults before a fresh worker had compiled its first kernel). A top pad of a whole arena heap makes glibc
// map each heap of that arena at its full size at once, so that with glibc.malloc.hugetlb=1 (which the CLI
// sets for the measuring commands) it is given transparent huge pages as a whole, faulted in 2 MiB at a time.
void run_worker(int in_fd, int out_fd, const std::map<std::string, TargetResources>& resources,
                const std::string& flavor_label) {
  // The budgets' timers signal the process: only the jobs' thread may take them.
  sigset_t timers = budget_signals();
  ::pthread_sigmask(SIG_BLOCK, &timers, nullptr);
  // The jobs' thread gets the stack the first thread would have had.
  rlimit stack{};
  ::getrlimit(RLIMIT_STACK, &stack);
  size_t stack_bytes = stack.rlim_cur == RLIM_INFINITY || stack.rlim_cur < (8u << 20) ? (8u << 20) : stack.rlim_cur;
  pthread_attr_t attr;
  ::pthread_attr_init(&attr);
  ::pthread_attr_setstacksize(&attr, stack_bytes);
  JobThread job_thread{in_fd, out_fd, &resources, &flavor_label};
  pthread_t thread;
  if (::pthread_create(&thread, &attr, run_job_thread, &job_thread) != 0) {
    ::pthread_sigmask(SIG_UNBLOCK, &timers, nullptr);  // no thread to be had: the jobs run here, as before
    serve_jobs(in_fd, out_fd, resources, flavor_label);
  }
  ::pthread_join(thread, nullptr);
  ::_exit(0);  // not reached: the jobs' thread ends the process
}

}  // namespace archdb
