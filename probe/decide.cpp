// probe/decide.cpp — see decide.h.
#include "probe/decide.h"

#include <algorithm>

#include "probe/asm_text.h"
#include "probe/classify.h"
#include "support/text.h"

namespace archdb {

Cell decide_cell(const CellInputs& in) {
  Cell c;
  c.key = in.key;
  c.target = in.target;
  c.intrinsic = in.resolution.intrinsic.empty() ? in.declared_name : in.resolution.intrinsic;
  if (in.resolve_death) {
    Outcome o = outcome_of_death(*in.resolve_death, in.timeout_s);
    c.status = o.status == Status::kArchAbsent ? Status::kToolchainCrash : o.status;
    c.evidence = "reading the declaration: " + o.evidence();
    if (is_toolchain_failure(c.status)) c.cause = Cause::kDeclaration;
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
    c.cause = Cause::kUnknownProcessor;
    return c;
  }
  if (!in.probe) {
    c.status = Status::kProbeError;
    c.evidence = "never compiled";
    return c;
  }
  Outcome v = outcome_of(*in.probe, in.timeout_s);
  const Attempt* lowered = in.probe;
  const Attempt* baseline = in.baseline;
  const Status default_status = v.status;
  bool solved = in.solution && in.solution_attempt &&
                (v.status == Status::kArchAbsent || v.status == Status::kOk || v.status == Status::kToolchainCrash);
  if (solved) {
    lowered = in.solution_attempt;
    baseline = in.solution_baseline;
    v = outcome_of(*lowered, in.timeout_s);
  }
  // The call this cell answers: the posing of the attempt that decided it; and LLVM's own declaration beside it.
  CallPosing posed = call_posing(in.resolution.shape, solved ? *in.solution : in.default_posing);
  if (!posed.empty()) c.posed = posed;
  c.declared = in.declared;
  if (v.status != Status::kOk) {
    c.status = v.status;
    c.evidence = v.evidence();
    c.cause = v.cell_cause();
    if (v.status == Status::kToolchainCrash && in.selection && in.selection->report && in.baseline_selection &&
        in.baseline_selection->report) {
      // LLVM crashed after selecting the call as an instruction this processor has no encoding for: LLVM's own
      // tables refuse it here.
      if (auto missing = unencodable_selection(*in.selection->report, *in.baseline_selection->report)) {
        c.status = Status::kArchAbsent;
        c.evidence = unencodable_evidence(*missing, v);
        c.cause = Cause::kUnencodable;
      }
    }
    if (solved) {
      // The default posing became no instruction (or what it became was rejected, or LLVM crashed on it); one
      // that asks for work was refused, or LLVM crashed or hung on it.
      std::string default_way;
      if (default_status == Status::kToolchainCrash)
        default_way = "LLVM crashed";
      else if (!in.probe->report || !in.baseline || !in.baseline->report ||
               lowered_mnemonics(in.probe->report->mnemonics, in.baseline->report->mnemonics).empty())
        default_way = "the call became no instruction";
      else
        default_way = "LLVM's assembler rejected what it became";
      c.evidence += " (posed with " + in.solution->describe(in.default_posing) + "; posed the default way " + default_way + ")";
      return c;
    }
    std::string tried = tried_summary(in.tried, in.default_posing);
    if (v.status == Status::kArchAbsent && !tried.empty()) c.evidence += " (" + tried + ")";
    return c;
  }
  if (!baseline || baseline->death || !baseline->report) {
    c.status = Status::kProbeError;
    c.evidence = "the baseline kernel did not compile on " + in.target;
    return c;
  }
  c.status = Status::kOk;
  c.lowered_to = lowered_mnemonics(lowered->report->mnemonics, baseline->report->mnemonics);
  const std::vector<std::string>& mc = lowered->report->mc_errors;
  if (names_missing_instruction(mc, c.lowered_to)) {
    // Codegen selected an instruction this processor does not have: a kernel built with it cannot run here.
    c.status = Status::kArchAbsent;
    c.evidence = clean_evidence("LLVM selects " + missing_instruction(mc, c.lowered_to) +
                                ", which LLVM's assembler rejects for this processor: " + missing_instruction_message(mc));
    c.cause = Cause::kRejectedInstruction;
    c.lowered_to.clear();
    return c;
  }
  if (!in.target_defect.empty()) {
    // The call lowers, but no kernel that holds it can be built for this processor: no answer.
    c.status = Status::kTargetUnsupported;
    c.evidence = in.target_defect;
    c.cause = Cause::kTargetDefect;
    c.lowered_to.clear();
    return c;
  }
  if (!mc.empty()) {
    // The printed assembly does not re-assemble: the object codegen writes itself decides.
    c.mc_check = clean_evidence("MC assembler rejects it: " + mc.front());
    Status object_status = Status::kProbeError;
    std::string object_evidence = "no object was written";
    Cause object_cause = Cause::kNone;
    if (in.object) {
      Outcome ov = outcome_of(*in.object, in.timeout_s);
      object_status = ov.status;
      object_evidence = ov.evidence();
      object_cause = ov.cell_cause();
      if (ov.status == Status::kOk && !in.object->report->object_error.empty()) {
        object_status = Status::kProbeError;
        object_evidence = "unreadable object: " + in.object->report->object_error;
      }
    }
    if (object_status != Status::kOk) {
      c.status = object_status;
      c.evidence = object_evidence;
      c.cause = object_cause;
      c.lowered_to.clear();
      c.mc_check.clear();
      return c;
    }
  }
  std::vector<std::string> notes;
  if (c.lowered_to.empty()) notes.push_back("the call became no instruction");
  if (!in.resolution.upgrade.empty()) notes.push_back(in.resolution.upgrade);
  c.note = join(notes, "; ");
  return c;
}

std::optional<MissingEncoding> unencodable_selection(const CompileReport& kernel, const CompileReport& baseline) {
  std::vector<std::string> own = lowered_mnemonics(kernel.selected, baseline.selected);
  for (const MissingEncoding& m : kernel.unencodable)
    if (std::find(own.begin(), own.end(), m.opcode) != own.end()) return m;
  return std::nullopt;
}

std::string unencodable_evidence(const MissingEncoding& missing, const Outcome& crash) {
  // The processor is the cell's: not named, so that the census groups the processors that share the answer.
  return "LLVM selects " + missing.opcode + " (" + missing.mnemonic + "), which has no encoding on this processor "
         "(LLVM's assembler: " + missing.diagnostic + "); compiling on, " + crash.evidence();
}

void decide_from_lowerings(const std::vector<Cell*>& cells, const std::function<bool(const Cell&)>& undecided,
                           const MnemonicRefusal& refusal) {
  std::vector<std::string> common;  // in the order of the first lowering
  bool any = false;
  for (const Cell* c : cells) {
    if (c->status != Status::kOk || c->lowered_to.empty() || !c->mc_check.empty()) continue;
    if (!any) {
      for (const std::string& m : c->lowered_to)
        if (!is_plumbing_mnemonic(m) && std::find(common.begin(), common.end(), m) == common.end()) common.push_back(m);
      any = true;
      continue;
    }
    common.erase(std::remove_if(common.begin(), common.end(),
                                [&](const std::string& m) {
                                  return std::find(c->lowered_to.begin(), c->lowered_to.end(), m) == c->lowered_to.end();
                                }),
                 common.end());
  }
  if (common.empty()) return;
  for (Cell* c : cells) {
    if (!is_toolchain_failure(c->status) || c->cause == Cause::kDeclaration || !undecided(*c)) continue;
    for (const std::string& m : common) {
      std::string words = refusal(c->target, m);
      if (words.empty()) continue;
      // The processor is the cell's: not named, so that the census groups the processors that share the answer.
      c->evidence = "wherever this call lowers it becomes " + m + ", which has no encoding on this processor "
                    "(LLVM's assembler: " + words + "); here, " + c->evidence;
      c->status = Status::kArchAbsent;
      c->cause = Cause::kInstructionAbsent;
      break;
    }
  }
}

std::string tried_summary(const std::vector<Posing>& tried, const Posing& base) {
  std::vector<std::string> sweep;
  int per_operand = 0;
  bool uniform = false, result_unused = false;
  for (const Posing& p : tried) {
    bool alike = !p.uniform && !p.result_unused && !p.imm.empty() &&
                 std::all_of(p.imm.begin(), p.imm.end(), [&](int64_t x) { return x == p.imm.front(); });
    if (alike) sweep.push_back(std::to_string(p.imm.front()));
    else if (p.uniform) uniform = true;
    else if (p.result_unused) result_unused = true;
    else if (p.imm != base.imm) ++per_operand;
  }
  std::vector<std::string> others;
  if (per_operand) others.push_back(std::to_string(per_operand) + " immediates set one operand at a time");
  if (uniform) others.push_back("uniform operands");
  if (result_unused) others.push_back("the result unused");
  std::string out;
  if (!sweep.empty()) out = "immarg sweep " + join(sweep, ", ") + ": none lowers";
  if (!others.empty()) out += (out.empty() ? "none lowers with " : "; nor with ") + join(others, ", ");
  return out;
}

std::string missing_instruction_message(const std::vector<std::string>& mc_errors) {
  for (const auto& e : mc_errors) {
    size_t at = e.find("instruction not supported on this GPU");
    if (at == std::string::npos) continue;
    // The instruction's text follows (its registers differ from processor to processor): the message alone.
    size_t cut = e.find(": ", at);
    return e.substr(at, cut == std::string::npos ? std::string::npos : cut - at);
  }
  return "";
}

// "" where the message quotes no line: then it is taken to be the call's.
std::vector<std::string> missing_mnemonics(const std::vector<std::string>& mc_errors) {
  std::vector<std::string> out;
  for (const auto& e : mc_errors) {
    size_t at = e.find("instruction not supported on this GPU");
    if (at == std::string::npos) continue;
    size_t cut = e.find(": ", at);
    // The rejected line's first word is its mnemonic (LLVM 23 ends it with a colon).
    std::string text = cut == std::string::npos ? "" : e.substr(cut + 2);
    size_t start = text.find_first_not_of(" \t");
    if (start == std::string::npos) {
      out.push_back("");
      continue;
    }
    size_t end = text.find_first_of(" \t", start);
    std::string word = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!word.empty() && (word.back() == ':' || word.back() == ',')) word.pop_back();
    out.push_back(word);
  }
  return out;
}

std::string missing_instruction(const std::vector<std::string>& mc_errors, const std::vector<std::string>& lowered_to) {
  for (const auto& m : missing_mnemonics(mc_errors))
    if (std::find(lowered_to.begin(), lowered_to.end(), m) != lowered_to.end()) return m;
  return lowered_to.empty() ? "it" : join(lowered_to, " ");
}

bool names_missing_instruction(const std::vector<std::string>& mc_errors, const std::vector<std::string>& lowered_to) {
  for (const auto& m : missing_mnemonics(mc_errors))
    if (m.empty() || std::find(lowered_to.begin(), lowered_to.end(), m) != lowered_to.end()) return true;
  return false;
}

}  // namespace archdb
