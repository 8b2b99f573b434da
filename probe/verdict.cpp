// probe/verdict.cpp — see verdict.h.
#include "probe/verdict.h"

#include "probe/asm_text.h"
#include "probe/classify.h"
#include "support/text.h"

namespace archdb {

Verdict classify_death(const WorkerEnd& end, int timeout_s) {
  std::string in_pass = end.pass.empty() ? "" : " in pass '" + end.pass + "'";
  switch (end.how) {
    case EndKind::kFatal: {
      std::string msg = clean_evidence(end.message);
      if (is_lowering_refusal(msg)) return {Status::kArchAbsent, "LLVM ERROR: " + msg};
      return {Status::kToolchainCrash, "LLVM ERROR: " + msg + in_pass};
    }
    case EndKind::kTimeout:
      // The worker's own alarm names the budget it ran out of (wall seconds, or milliseconds of CPU time).
      if (end.message.rfind("no answer within ", 0) == 0) return {Status::kToolchainTimeout, clean_evidence(end.message) + in_pass};
      return {Status::kToolchainTimeout, "no answer within " + std::to_string(timeout_s) + " s" + in_pass};
    case EndKind::kSignal: return {Status::kToolchainCrash, "LLVM crashed: " + clean_evidence(end.message) + in_pass};
    case EndKind::kJobError: return {Status::kProbeError, "probe module rejected: " + clean_evidence(end.message)};
    case EndKind::kCompleted:
    case EndKind::kExit:
    case EndKind::kRetired: break;
  }
  return {Status::kToolchainCrash, "worker ended unexpectedly: " + clean_evidence(end.message) + in_pass};
}

Verdict verdict_of(const Attempt& a, int timeout_s) {
  if (a.death) return classify_death(*a.death, timeout_s);
  if (!a.report) return {Status::kProbeError, "no report from the worker"};
  const CompileReport& r = *a.report;
  if (r.refused) {
    WorkerEnd refusal;
    refusal.how = EndKind::kFatal;
    refusal.message = *r.refused;
    refusal.pass = r.refused_pass;
    return classify_death(refusal, timeout_s);
  }
  if (r.error) return {Status::kArchAbsent, "error: " + clean_evidence(*r.error)};
  if (!r.undefined.empty())
    return {Status::kArchAbsent, clean_evidence("the call was lowered to a call of undefined symbol " + join(r.undefined, ", "))};
  return {Status::kOk, ""};
}

Cell decide_cell(const CellInputs& in) {
  Cell c;
  c.key = in.key;
  c.target = in.target;
  c.intrinsic = in.resolution.intrinsic.empty() ? in.declared_name : in.resolution.intrinsic;
  if (in.resolve_death) {
    Verdict v = classify_death(*in.resolve_death, in.timeout_s);
    c.status = v.status == Status::kArchAbsent ? Status::kToolchainCrash : v.status;
    c.evidence = "reading the declaration: " + v.evidence;
    return c;
  }
  switch (in.resolution.kind) {
    case Resolution::Kind::kNameAbsent:
      c.status = Status::kNameAbsent;
      c.evidence = in.resolution.evidence;
      return c;
    case Resolution::Kind::kSignatureMismatch:
      c.status = Status::kSignatureMismatch;
      c.evidence = in.resolution.evidence;
      return c;
    case Resolution::Kind::kResolved: break;
    case Resolution::Kind::kCatalogError:
    case Resolution::Kind::kProbeError:
      c.status = Status::kProbeError;
      c.evidence = in.resolution.evidence;
      return c;
  }
  if (!in.target_known) {
    c.status = Status::kTargetUnsupported;
    c.evidence = in.flavor_label + " does not know processor '" + in.target + "'";
    return c;
  }
  if (!in.probe) {
    c.status = Status::kProbeError;
    c.evidence = "never compiled";
    return c;
  }
  Verdict v = verdict_of(*in.probe, in.timeout_s);
  const Attempt* lowered = in.probe;
  if (v.status == Status::kArchAbsent && in.sweep_value && in.sweep_attempt) {
    lowered = in.sweep_attempt;
    c.imm = *in.sweep_value;
    v = {Status::kOk, ""};
  }
  if (v.status != Status::kOk) {
    c.status = v.status;
    c.evidence = v.evidence;
    if (v.status == Status::kArchAbsent && !in.swept.empty()) {
      std::vector<std::string> values;
      for (int64_t x : in.swept) values.push_back(std::to_string(x));
      c.evidence += " (immarg sweep " + join(values, ", ") + ": none lowers)";
    }
    return c;
  }
  if (!in.baseline || in.baseline->death || !in.baseline->report) {
    c.status = Status::kProbeError;
    c.evidence = "the baseline kernel did not compile on " + in.target;
    return c;
  }
  c.status = Status::kOk;
  if (!c.imm && in.resolution.default_imm != 0) c.imm = in.resolution.default_imm;
  c.lowered_to = lowered_mnemonics(lowered->report->mnemonics, in.baseline->report->mnemonics);
  const std::vector<std::string>& mc = lowered->report->mc_errors;
  if (!mc.empty()) {
    // The printed assembly does not re-assemble: the object codegen writes itself decides.
    c.mc_check = clean_evidence("MC assembler rejects it: " + mc.front());
    Verdict ov = in.object ? verdict_of(*in.object, in.timeout_s) : Verdict{Status::kProbeError, "no object was written"};
    if (ov.status == Status::kOk && !in.object->report->object_error.empty())
      ov = {Status::kProbeError, "unreadable object: " + in.object->report->object_error};
    if (ov.status != Status::kOk) {
      c.status = ov.status;
      c.evidence = ov.evidence;
      c.lowered_to.clear();
      c.mc_check.clear();
      c.imm.reset();
      return c;
    }
  }
  std::vector<std::string> notes;
  if (c.lowered_to.empty()) notes.push_back("the call became no instruction");
  if (!in.resolution.upgrade.empty()) notes.push_back(in.resolution.upgrade);
  c.note = join(notes, "; ");
  return c;
}

}  // namespace archdb
