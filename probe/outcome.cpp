// probe/outcome.cpp — see outcome.h.
#include "probe/outcome.h"

#include "probe/classify.h"
#include "support/text.h"

namespace archdb {

std::string Outcome::evidence() const {
  const std::string in_pass = pass.empty() ? "" : " in pass '" + pass + "'";
  switch (cause) {
    case Cause::kLowered: return "";
    case Cause::kRefusal: return "LLVM ERROR: " + message;
    case Cause::kFatalError: return "LLVM ERROR: " + message + in_pass;
    case Cause::kDiagnostic: return "error: " + message;
    case Cause::kUndefinedSymbol:
      return clean_evidence("the call was lowered to a call of undefined symbol " + join(undefined, ", "));
    case Cause::kCrash: return "LLVM crashed: " + message + in_pass;
    case Cause::kTimeout:
      if (cpu_budget_ms > 0) return "no answer within " + std::to_string(cpu_budget_ms) + " ms of CPU time" + in_pass;
      return "no answer within " + std::to_string(budget_s) + " s" + in_pass;
    case Cause::kWorkerEnded: return "worker ended unexpectedly: " + message + in_pass;
    case Cause::kJobRejected: return "probe module rejected: " + message;
    case Cause::kNoReport: return "no report from the worker";
  }
  return "";
}

archdb::Cause Outcome::cell_cause() const {
  switch (cause) {
    case Cause::kRefusal: return archdb::Cause::kRefusal;
    case Cause::kDiagnostic: return archdb::Cause::kDiagnostic;
    case Cause::kUndefinedSymbol: return archdb::Cause::kUndefinedSymbol;
    case Cause::kFatalError: return archdb::Cause::kFatalError;
    case Cause::kCrash: return archdb::Cause::kCrash;
    case Cause::kTimeout: return archdb::Cause::kHang;
    case Cause::kWorkerEnded: return archdb::Cause::kWorkerEnded;
    case Cause::kLowered:
    case Cause::kJobRejected:
    case Cause::kNoReport: break;
  }
  return archdb::Cause::kNone;
}

std::string Outcome::refusal_key() const { return mask_immediates(evidence()); }

bool Outcome::refuses_the_intrinsic() const {
  if (cause != Cause::kRefusal && cause != Cause::kDiagnostic) return false;
  for (const char* s : {"Cannot select: intrinsic %", "intrinsic not supported on subtarget", "requires target feature",
                        "not supported on this GPU", "Do not know how to", "no libcall available"})
    if (message.find(s) != std::string::npos) return true;
  return false;
}

bool Outcome::crashed_selecting() const {
  return (cause == Cause::kCrash || cause == Cause::kFatalError || cause == Cause::kWorkerEnded) &&
         (pass == "AMDGPU DAG->DAG Pattern Instruction Selection" || pass == "InstructionSelect");
}

Outcome outcome_of_death(const WorkerEnd& end, int timeout_s) {
  Outcome o;
  o.pass = end.pass;
  switch (end.how) {
    case EndKind::kFatal:
      o.message = clean_evidence(end.message);
      if (is_lowering_refusal(o.message)) {
        o.status = Status::kArchAbsent;
        o.cause = Outcome::Cause::kRefusal;
      } else {
        o.status = Status::kToolchainCrash;
        o.cause = Outcome::Cause::kFatalError;
      }
      return o;
    case EndKind::kTimeout:
    case EndKind::kCpuBudget:
      o.status = Status::kToolchainTimeout;
      o.cause = Outcome::Cause::kTimeout;
      if (end.how == EndKind::kCpuBudget && end.budget > 0) o.cpu_budget_ms = end.budget;
      else o.budget_s = end.budget > 0 ? end.budget : timeout_s;
      return o;
    case EndKind::kSignal:
      o.status = Status::kToolchainCrash;
      o.cause = Outcome::Cause::kCrash;
      o.message = clean_evidence(end.message);
      return o;
    case EndKind::kJobError:
      o.status = Status::kProbeError;
      o.cause = Outcome::Cause::kJobRejected;
      o.message = clean_evidence(end.message);
      o.pass.clear();
      return o;
    case EndKind::kCompleted:
    case EndKind::kExit:
    case EndKind::kRetired: break;
  }
  o.status = Status::kToolchainCrash;
  o.cause = Outcome::Cause::kWorkerEnded;
  o.message = clean_evidence(end.message);
  return o;
}

Outcome outcome_of(const Attempt& a, int timeout_s) {
  if (a.death) return outcome_of_death(*a.death, timeout_s);
  Outcome o;
  if (!a.report) return o;  // no report: probe_error
  const CompileReport& r = *a.report;
  if (r.refused) {
    WorkerEnd refusal;
    refusal.how = EndKind::kFatal;
    refusal.message = *r.refused;
    refusal.pass = r.refused_pass;
    return outcome_of_death(refusal, timeout_s);
  }
  if (r.error) {
    o.status = Status::kArchAbsent;
    o.cause = Outcome::Cause::kDiagnostic;
    o.message = clean_evidence(*r.error);
    return o;
  }
  if (!r.undefined.empty()) {
    o.status = Status::kArchAbsent;
    o.cause = Outcome::Cause::kUndefinedSymbol;
    o.undefined = r.undefined;
    return o;
  }
  o.status = Status::kOk;
  o.cause = Outcome::Cause::kLowered;
  return o;
}

}  // namespace archdb
