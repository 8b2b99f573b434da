// tests/outcome_test.cpp — the parent-worker messages round-trip through their one encoder and decoder, an
// attempt's outcome keeps what LLVM said as fields and renders its evidence once, and the rules of decide.h
// turn made-up reports into cells: no LLVM and no workers here (probe_test.cpp has those).
#include <gtest/gtest.h>

#include "probe/job.h"
#include "probe/decide.h"
#include "probe/outcome.h"

namespace archdb {
namespace {

CompileReport lowered(std::vector<std::string> mnemonics) {
  CompileReport r;
  r.id = 1;
  r.function = "p1";
  r.mnemonics = std::move(mnemonics);
  r.cross_checked = true;
  return r;
}

Attempt reported(CompileReport r) { return Attempt{std::move(r), std::nullopt}; }

Attempt died(EndKind how, std::string message, std::string pass = "", int budget = 0) {
  WorkerEnd end;
  end.how = how;
  end.message = std::move(message);
  end.pass = std::move(pass);
  end.budget = budget;
  return Attempt{std::nullopt, end};
}

CellInputs resolved_inputs() {
  CellInputs in;
  in.key = "k";
  in.target = "gfx90a";
  in.declared_name = "llvm.amdgcn.k";
  in.resolution.kind = Resolution::Kind::kResolved;
  in.resolution.intrinsic = "llvm.amdgcn.k";
  in.flavor_label = "LLVM 22.1.8";
  return in;
}

TEST(Messages, EveryReportRoundTrips) {
  CompileReport c = lowered({"v_mov_b32", "s_endpgm"});
  c.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  c.refused_pass = "AMDGPU DAG->DAG Pattern Instruction Selection";
  c.error = "requires target feature 'x'";
  c.mc_errors = {"instruction not supported on this GPU"};
  c.undefined = {"__ocml_sin_f32"};
  c.from_object = true;
  c.object_error = "bad";
  c.cpu_ms = 1.5;
  auto back = decode_report(encode_report(c));
  ASSERT_TRUE(back && std::holds_alternative<CompileReport>(*back));
  const auto& d = std::get<CompileReport>(*back);
  EXPECT_EQ(d.id, c.id);
  EXPECT_EQ(d.function, c.function);
  EXPECT_EQ(d.refused, c.refused);
  EXPECT_EQ(d.refused_pass, c.refused_pass);
  EXPECT_EQ(d.error, c.error);
  EXPECT_EQ(d.mnemonics, c.mnemonics);
  EXPECT_EQ(d.cross_checked, c.cross_checked);
  EXPECT_EQ(d.mc_errors, c.mc_errors);
  EXPECT_EQ(d.undefined, c.undefined);
  EXPECT_EQ(d.from_object, c.from_object);
  EXPECT_EQ(d.object_error, c.object_error);
  EXPECT_EQ(d.cpu_ms, c.cpu_ms);

  ResolveReport r;
  r.id = 7;
  r.resolution.kind = Resolution::Kind::kResolved;
  r.resolution.intrinsic = "llvm.amdgcn.x.f32";
  r.resolution.upgrade = "remangled from llvm.amdgcn.x";
  r.resolution.default_imm = 1;
  r.resolution.shape.callee = "llvm.amdgcn.x.f32";
  r.resolution.shape.return_type = "float";
  r.resolution.shape.params = {{"float", false}, {"i32", true}};
  auto rb = decode_report(encode_report(r));
  ASSERT_TRUE(rb && std::holds_alternative<ResolveReport>(*rb));
  const auto& rd = std::get<ResolveReport>(*rb);
  EXPECT_EQ(rd.id, 7);
  EXPECT_EQ(rd.resolution.intrinsic, r.resolution.intrinsic);
  EXPECT_EQ(rd.resolution.upgrade, r.resolution.upgrade);
  EXPECT_EQ(rd.resolution.default_imm, 1);
  ASSERT_EQ(rd.resolution.shape.params.size(), 2u);
  EXPECT_TRUE(rd.resolution.shape.params[1].immarg);

  for (Resolution::Kind k : {Resolution::Kind::kNameAbsent, Resolution::Kind::kSignatureMismatch,
                             Resolution::Kind::kCatalogError, Resolution::Kind::kProbeError}) {
    ResolveReport n;
    n.resolution.kind = k;
    auto nb = decode_report(encode_report(n));
    ASSERT_TRUE(nb);
    EXPECT_EQ(std::get<ResolveReport>(*nb).resolution.kind, k);
  }

  EXPECT_TRUE(std::holds_alternative<JobDone>(*decode_report(encode_report(JobDone{}))));
  EXPECT_EQ(std::get<JobError>(*decode_report(encode_report(JobError{"m"}))).message, "m");
  EXPECT_EQ(std::get<UnattributedError>(*decode_report(encode_report(UnattributedError{"u"}))).message, "u");
}

TEST(Messages, WhatLlvmSelectedAndWhatHasNoEncodingRoundTrip) {
  CompileReport c = lowered({});
  c.selected = {"S_LOAD_DWORD_IMM", "S_BARRIER_SIGNAL_IMM", "S_ENDPGM"};
  c.unencodable = {{"S_BARRIER_SIGNAL_IMM", "s_barrier_signal", "instruction not supported on this GPU"}};
  auto back = decode_report(encode_report(c));
  ASSERT_TRUE(back && std::holds_alternative<CompileReport>(*back));
  const auto& d = std::get<CompileReport>(*back);
  EXPECT_EQ(d.selected, c.selected);
  ASSERT_EQ(d.unencodable.size(), 1u);
  EXPECT_EQ(d.unencodable[0].opcode, "S_BARRIER_SIGNAL_IMM");
  EXPECT_EQ(d.unencodable[0].mnemonic, "s_barrier_signal");
  EXPECT_EQ(d.unencodable[0].diagnostic, "instruction not supported on this GPU");
  Job job;
  job.target = "gfx1030";
  job.selection = Job::Selection::kBeforeFinalize;
  job.retire_after = true;
  Job job_back = decode_job(encode_job(job));
  EXPECT_EQ(job_back.selection, Job::Selection::kBeforeFinalize);
  EXPECT_TRUE(job_back.retire_after);
}

TEST(Messages, LastWordsWrittenWithoutAllocationDecodeLikeAnyReport) {
  char buf[512];
  size_t n = encode_last_words(buf, sizeof buf, EndKind::kSignal, "p3", "Branch relaxation pass", "SIG\"SEGV\"\n");
  std::string line(buf, n);
  EXPECT_EQ(line.back(), '\n');
  auto words = decode_report(line);
  ASSERT_TRUE(words && std::holds_alternative<LastWords>(*words)) << line;
  const auto& w = std::get<LastWords>(*words);
  EXPECT_EQ(w.how, EndKind::kSignal);
  EXPECT_EQ(w.function, "p3");
  EXPECT_EQ(w.pass, "Branch relaxation pass");
  EXPECT_EQ(w.message, "SIG\"SEGV\"\n");  // escaped on the wire, so the line stays one line
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  // The same words through the allocating encoder decode to the same fields.
  auto again = decode_report(encode_report(LastWords{EndKind::kFatal, "f", "p", "m", 0}));
  EXPECT_EQ(std::get<LastWords>(*again).how, EndKind::kFatal);
  // A budget that ran out travels as a number, the CPU budget's apart from the wall clock's.
  char budget_buf[256];
  size_t b = encode_last_words(budget_buf, sizeof budget_buf, EndKind::kCpuBudget, "p4", "", "", 50);
  auto budget = decode_report(std::string(budget_buf, b));
  ASSERT_TRUE(budget && std::holds_alternative<LastWords>(*budget)) << std::string(budget_buf, b);
  EXPECT_EQ(std::get<LastWords>(*budget).how, EndKind::kCpuBudget);
  EXPECT_EQ(std::get<LastWords>(*budget).budget, 50);
  EXPECT_EQ(std::get<LastWords>(*decode_report(encode_report(LastWords{EndKind::kTimeout, "f", "", "", 7}))).budget, 7);
  // Cut to fit a small buffer, they still decode.
  std::string long_message(2000, 'x');
  char small[80];
  size_t m = encode_last_words(small, sizeof small, EndKind::kTimeout, "p", "pass", long_message.c_str(), 10);
  ASSERT_LE(m, sizeof small);
  auto cut = decode_report(std::string(small, m));
  ASSERT_TRUE(cut && std::holds_alternative<LastWords>(*cut)) << std::string(small, m);
  EXPECT_EQ(std::get<LastWords>(*cut).how, EndKind::kTimeout);
  EXPECT_EQ(std::get<LastWords>(*cut).budget, 10);
}

TEST(Messages, TornOrForeignLinesDoNotDecode) {
  EXPECT_FALSE(decode_report("{\"t\":\"die\",\"how\":\"sig"));
  EXPECT_FALSE(decode_report("{\"t\":\"item\"}"));
  EXPECT_FALSE(decode_report("not json"));
  EXPECT_FALSE(decode_report("{\"t\":\"unknown\"}"));
}

TEST(Messages, JobsRoundTrip) {
  Job job;
  job.kind = Job::Kind::kCompile;
  job.target = "gfx942";
  job.cpu_budget_ms = 50;
  job.emit_object = true;
  job.items.push_back({3, "p3", "define ...", "declare void @x()", DeclSpec{}});
  Job back = decode_job(encode_job(job));
  EXPECT_EQ(back.target, "gfx942");
  EXPECT_EQ(back.cpu_budget_ms, 50);
  EXPECT_TRUE(back.emit_object);
  ASSERT_EQ(back.items.size(), 1u);
  EXPECT_EQ(back.items[0].function, "p3");
  EXPECT_EQ(back.items[0].declare_line, "declare void @x()");
}

TEST(Outcome, RefusalIsArchAbsentAndOtherFatalErrorsAreCrashes) {
  Outcome refusal = outcome_of(died(EndKind::kFatal, "Cannot select: intrinsic %llvm.amdgcn.k", "ISel"), 60);
  EXPECT_EQ(refusal.status, Status::kArchAbsent);
  EXPECT_EQ(refusal.cause, Outcome::Cause::kRefusal);
  EXPECT_EQ(refusal.pass, "ISel");  // kept, though a refusal's evidence does not name it
  EXPECT_EQ(refusal.evidence(), "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.k");
  Outcome crash = outcome_of(died(EndKind::kFatal, "Broken function found", "Verifier"), 60);
  EXPECT_EQ(crash.status, Status::kToolchainCrash);
  EXPECT_EQ(crash.cause, Outcome::Cause::kFatalError);
  EXPECT_EQ(crash.evidence(), "LLVM ERROR: Broken function found in pass 'Verifier'");
  Outcome signal = outcome_of(died(EndKind::kSignal, "SIGSEGV", "Branch relaxation pass"), 60);
  EXPECT_EQ(signal.cause, Outcome::Cause::kCrash);
  EXPECT_EQ(signal.message, "SIGSEGV");
  EXPECT_EQ(signal.pass, "Branch relaxation pass");
  EXPECT_EQ(signal.evidence(), "LLVM crashed: SIGSEGV in pass 'Branch relaxation pass'");
  EXPECT_EQ(outcome_of(died(EndKind::kJobError, "does not parse"), 60).status, Status::kProbeError);
  EXPECT_EQ(outcome_of(died(EndKind::kExit, "worker exited with status 3"), 60).status, Status::kToolchainCrash);
  EXPECT_EQ(outcome_of(Attempt{}, 60).status, Status::kProbeError);
  EXPECT_EQ(outcome_of(Attempt{}, 60).evidence(), "no report from the worker");
}

TEST(Outcome, ABudgetThatRanOutIsNamedFromItsNumberNotFromTheWorkersWords) {
  Outcome cpu = outcome_of(died(EndKind::kCpuBudget, "", "", 50), 60);
  EXPECT_EQ(cpu.status, Status::kToolchainTimeout);
  EXPECT_EQ(cpu.cpu_budget_ms, 50);
  EXPECT_EQ(cpu.evidence(), "no answer within 50 ms of CPU time");
  EXPECT_EQ(outcome_of(died(EndKind::kTimeout, "", "ISel", 10), 60).evidence(), "no answer within 10 s in pass 'ISel'");
  // The watchdog's kill names no budget: the measurement's own.
  EXPECT_EQ(outcome_of(died(EndKind::kTimeout, "anything at all"), 7).evidence(), "no answer within 7 s");
}

TEST(Outcome, RefusalsOfTheIntrinsicAndCrashesInSelectionAreFieldsNotText) {
  EXPECT_TRUE(outcome_of(died(EndKind::kFatal, "Cannot select: intrinsic %llvm.amdgcn.k"), 60).refuses_the_intrinsic());
  EXPECT_FALSE(outcome_of(died(EndKind::kFatal, "Cannot select: t5: i32 = add"), 60).refuses_the_intrinsic());
  CompileReport diagnosed = lowered({});
  diagnosed.error = "llvm.amdgcn.k requires target feature 'x'";
  EXPECT_TRUE(outcome_of(reported(diagnosed), 60).refuses_the_intrinsic());
  // A crash's words never make it a refusal, whatever they say.
  EXPECT_FALSE(outcome_of(died(EndKind::kSignal, "requires target feature"), 60).refuses_the_intrinsic());
  EXPECT_TRUE(outcome_of(died(EndKind::kSignal, "SIGSEGV", "AMDGPU DAG->DAG Pattern Instruction Selection"), 60)
                  .crashed_selecting());
  EXPECT_TRUE(outcome_of(died(EndKind::kFatal, "bad", "InstructionSelect"), 60).crashed_selecting());
  EXPECT_FALSE(outcome_of(died(EndKind::kSignal, "SIGSEGV", "Branch relaxation pass"), 60).crashed_selecting());
  // Refused alike whatever the immediate: one key.
  EXPECT_EQ(outcome_of(died(EndKind::kFatal, "Cannot select: t1: i32 = Constant<4>"), 60).refusal_key(),
            outcome_of(died(EndKind::kFatal, "Cannot select: t1: i32 = Constant<16>"), 60).refusal_key());
}

TEST(Outcome, ReportedRefusalDiagnosticAndUndefinedSymbolAreArchAbsent) {
  CompileReport refused = lowered({});
  refused.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  EXPECT_EQ(outcome_of(reported(refused), 60).status, Status::kArchAbsent);
  CompileReport diagnosed = lowered({"v_mov_b32"});
  diagnosed.error = "llvm.amdgcn.k requires target feature 'x'";
  Outcome d = outcome_of(reported(diagnosed), 60);
  EXPECT_EQ(d.status, Status::kArchAbsent);
  EXPECT_EQ(d.cause, Outcome::Cause::kDiagnostic);
  EXPECT_EQ(d.evidence(), "error: llvm.amdgcn.k requires target feature 'x'");
  CompileReport libcall = lowered({"s_swappc_b64"});
  libcall.undefined = {"__divdi3"};
  Outcome u = outcome_of(reported(libcall), 60);
  EXPECT_EQ(u.status, Status::kArchAbsent);
  EXPECT_EQ(u.undefined, std::vector<std::string>{"__divdi3"});
  EXPECT_EQ(u.evidence(), "the call was lowered to a call of undefined symbol __divdi3");
  EXPECT_EQ(outcome_of(reported(lowered({"v_mfma"})), 60).status, Status::kOk);
}

TEST(Decide, CellOfAResolvedKeyIsTheDifferenceFromItsBaseline) {
  CellInputs in = resolved_inputs();
  Attempt probe = reported(lowered({"s_load", "v_mfma_f32_4x4x4bf16_1k", "s_endpgm"}));
  Attempt base = reported(lowered({"s_load", "s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"v_mfma_f32_4x4x4bf16_1k"});
  EXPECT_EQ(c.note, "");
  EXPECT_TRUE(!c.posed || c.posed->imm.empty()) << cell_to_json(c).dump();

  Attempt nothing = reported(lowered({"s_load", "s_endpgm"}));
  in.probe = &nothing;
  EXPECT_EQ(decide_cell(in).note, "the call became no instruction");

  in.baseline = nullptr;
  EXPECT_EQ(decide_cell(in).status, Status::kProbeError);
}

Posing imms(std::vector<int64_t> values) {
  Posing p;
  p.imm = std::move(values);
  return p;
}

TEST(Decide, ASweepValueThatLoweredMakesTheCellOkAndOtherwiseWhatWasTriedIsNamed) {
  CellInputs in = resolved_inputs();
  CompileReport refused = lowered({});
  refused.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  Attempt probe = reported(refused);
  Attempt base = reported(lowered({"s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  in.default_posing = imms({0, 0});
  in.tried = {imms({1, 1}), imms({2, 2})};
  Cell absent = decide_cell(in);
  EXPECT_EQ(absent.status, Status::kArchAbsent);
  EXPECT_EQ(absent.evidence, "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.k (immarg sweep 1, 2: none lowers)");

  Posing uniform = in.default_posing;
  uniform.uniform = true;
  Posing unused = in.default_posing;
  unused.result_unused = true;
  in.tried = {imms({1, 1}), imms({1, 0}), imms({15, 0}), uniform, unused};
  EXPECT_EQ(decide_cell(in).evidence,
            "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.k (immarg sweep 1: none lowers; nor with 2 immediates "
            "set one operand at a time, uniform operands, the result unused)");

  Attempt swept = reported(lowered({"global_load_lds_dword", "s_endpgm"}));
  in.solution = imms({2, 2});
  in.solution_attempt = &swept;
  in.solution_baseline = &base;
  Cell ok = decide_cell(in);
  EXPECT_EQ(ok.status, Status::kOk);
  ASSERT_TRUE(ok.posed);
  EXPECT_EQ(ok.posed->imm, (std::vector<int64_t>{2, 2}));  // the call the cell answers
  EXPECT_EQ(ok.lowered_to, std::vector<std::string>{"global_load_lds_dword"});
}

TEST(Decide, AnotherPosingThatLoweredIsRecordedWithItsOwnBaseline) {
  CellInputs in = resolved_inputs();
  CompileReport refused = lowered({});
  refused.error = "Illegal instruction detected: Operand has incorrect register class";
  Attempt probe = reported(refused);
  Attempt base = reported(lowered({"v_mov_b32", "s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  in.resolution.shape.params = {{"i32", false}, {"i32", true}};  // s.setreg: its value, then its immediate
  in.resolution.shape.return_type = "void";
  in.default_posing = imms({0});
  Posing uniform = in.default_posing;
  uniform.uniform = true;
  in.tried = {uniform};
  Attempt posed = reported(lowered({"s_setreg_b32", "s_endpgm"}));
  Attempt uniform_base = reported(lowered({"s_endpgm"}));
  in.solution = uniform;
  in.solution_attempt = &posed;
  in.solution_baseline = &uniform_base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk);
  ASSERT_TRUE(c.posed);
  EXPECT_EQ(c.posed->uniform, std::optional<bool>(true));
  EXPECT_EQ(c.posed->imm, std::vector<int64_t>{0});
  EXPECT_FALSE(c.posed->result_used);  // nothing returned: nothing to pose
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"s_setreg_b32"});

  // An instruction that appeared only with other immediates (the default call folded away).
  in = resolved_inputs();
  Attempt folded = reported(lowered({"s_endpgm"}));
  Attempt loads = reported(lowered({"image_load", "s_endpgm"}));
  Attempt image_base = reported(lowered({"s_endpgm"}));
  in.probe = &folded;
  in.baseline = &image_base;
  in.default_posing = imms({0, 0, 0});
  in.solution = imms({1, 0, 0});
  in.solution_attempt = &loads;
  in.solution_baseline = &image_base;
  Cell image = decide_cell(in);
  EXPECT_EQ(image.status, Status::kOk);
  EXPECT_EQ(image.posed->imm, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(image.note, "");
  EXPECT_EQ(image.lowered_to, std::vector<std::string>{"image_load"});
}

TEST(Decide, ACallThatIsRefusedWhenAskedForWorkIsArchAbsent) {
  CellInputs in = resolved_inputs();
  Attempt folded = reported(lowered({"s_endpgm"}));
  Attempt base = reported(lowered({"s_endpgm"}));
  CompileReport refused = lowered({});
  refused.error = "requested image instruction is not supported on this GPU";
  Attempt asked = reported(refused);
  in.probe = &folded;
  in.baseline = &base;
  in.default_posing = imms({0, 0});
  in.solution = imms({1, 0});
  in.solution_attempt = &asked;
  in.solution_baseline = &base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kArchAbsent);
  EXPECT_EQ(c.evidence, "error: requested image instruction is not supported on this GPU (posed with immediates 1, 0; "
                        "posed the default way the call became no instruction)");
}

TEST(Decide, ACallOnWhichLlvmHangsWhenAskedForWorkIsTheHang) {
  // image.sample.* with a one-channel mask on a processor where instruction selection never ends: an `ok`
  // (no instruction) would clear a kernel its compiler cannot build.
  CellInputs in = resolved_inputs();
  Attempt folded = reported(lowered({"s_endpgm"}));
  Attempt base = reported(lowered({"s_endpgm"}));
  Attempt hung = died(EndKind::kCpuBudget, "", "AMDGPU DAG->DAG Pattern Instruction Selection", 100);
  in.probe = &folded;
  in.baseline = &base;
  in.default_posing = imms({0, 0});
  in.solution = imms({1, 0});
  in.solution_attempt = &hung;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kToolchainTimeout);
  EXPECT_NE(c.evidence.find("(posed with immediates 1, 0; posed the default way the call became no instruction)"),
            std::string::npos) << c.evidence;

  // Where the default posing became an instruction the assembler rejected, the evidence says so.
  CompileReport printed = lowered({"image_gather4", "s_endpgm"});
  printed.mc_errors = {"invalid image_gather dmask: only one bit must be set"};
  Attempt rejected = reported(printed);
  in.probe = &rejected;
  Attempt crashed = died(EndKind::kSignal, "SIGSEGV", "AMDGPU DAG->DAG Pattern Instruction Selection");
  in.solution_attempt = &crashed;
  Cell r = decide_cell(in);
  EXPECT_EQ(r.status, Status::kToolchainCrash);
  EXPECT_NE(r.evidence.find("posed the default way LLVM's assembler rejected what it became)"), std::string::npos)
      << r.evidence;
}

TEST(Decide, ACallLlvmCrashedOnPosedTheDefaultWayIsAnsweredByAPosingThatLowers) {
  // image.load returning its fail status ({<4 x float>, i32}) crashes instruction selection with texfailctrl 0;
  // with texfailctrl 1 it is image_load ... tfe. The cell is what a kernel written that way gets.
  CellInputs in = resolved_inputs();
  Attempt crashed = died(EndKind::kSignal, "SIGSEGV", "AMDGPU DAG->DAG Pattern Instruction Selection");
  Attempt loads = reported(lowered({"image_load", "s_endpgm"}));
  Attempt base = reported(lowered({"s_endpgm"}));
  in.probe = &crashed;
  in.default_posing = imms({0, 0});
  in.solution = imms({0, 1});
  in.solution_attempt = &loads;
  in.solution_baseline = &base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk) << c.evidence;
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"image_load"});
  EXPECT_EQ(c.posed->imm, (std::vector<int64_t>{0, 1}));

  // Asked for work, the processor refuses the intrinsic itself: a refusal, saying how the default crashed.
  CompileReport unsupported = lowered({});
  unsupported.error = "requested image instruction is not supported on this GPU";
  Attempt refused = reported(unsupported);
  in.solution_attempt = &refused;
  Cell r = decide_cell(in);
  EXPECT_EQ(r.status, Status::kArchAbsent) << r.evidence;
  EXPECT_NE(r.evidence.find("(posed with immediates 0, 1; posed the default way LLVM crashed)"), std::string::npos)
      << r.evidence;

  // No posing found: the crash stands, as it was.
  in.solution.reset();
  in.solution_attempt = nullptr;
  EXPECT_EQ(decide_cell(in).status, Status::kToolchainCrash);
}

TEST(Decide, AnInstructionTheAssemblerSaysTheProcessorLacksIsArchAbsent) {
  CellInputs in = resolved_inputs();
  CompileReport printed = lowered({"image_load", "s_endpgm"});
  printed.mc_errors = {"instruction not supported on this GPU"};
  Attempt probe = reported(printed);
  Attempt base = reported(lowered({"s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kArchAbsent);
  EXPECT_EQ(c.evidence, "LLVM selects image_load, which LLVM's assembler rejects for this processor: instruction not supported on this GPU");
  EXPECT_TRUE(c.lowered_to.empty());
  EXPECT_EQ(c.mc_check, "");
}

TEST(Decide, AnInstructionTheBaselineHasTooIsNotTheCallsAndTheObjectDecides) {
  // LLVM 23 inserts s_wait_xcnt around memory accesses for gfx1310 and its assembler rejects it there: in the
  // baseline as much as in the probe, so it says nothing about the intrinsic.
  CellInputs in = resolved_inputs();
  CompileReport printed = lowered({"s_wait_xcnt", "image_get_resinfo", "s_endpgm"});
  printed.mc_errors = {"instruction not supported on this GPU (gfx1310): s_wait_xcnt: 0x0"};
  Attempt probe = reported(printed);
  Attempt base = reported(lowered({"s_wait_xcnt", "s_endpgm"}));
  Attempt object = reported(lowered({}));
  in.probe = &probe;
  in.baseline = &base;
  in.object = &object;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk) << c.evidence;
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"image_get_resinfo"});
  EXPECT_NE(c.mc_check.find("s_wait_xcnt"), std::string::npos) << c.mc_check;
  // The call's own instruction, quoted LLVM 23's way (a colon after the mnemonic), is the refusal.
  printed.mc_errors = {"instruction not supported on this GPU (gfx1310): image_get_resinfo: v0, v1"};
  Attempt own = reported(printed);
  in.probe = &own;
  Cell r = decide_cell(in);
  EXPECT_EQ(r.status, Status::kArchAbsent);
  EXPECT_EQ(r.evidence.rfind("LLVM selects image_get_resinfo, ", 0), 0u) << r.evidence;
}

TEST(Decide, RejectedAssemblyIsDecidedByTheObject) {
  CellInputs in = resolved_inputs();
  CompileReport printed = lowered({"v_cvt_x", "s_endpgm"});
  printed.mc_errors = {"invalid image_gather dmask"};
  Attempt probe = reported(printed);
  Attempt base = reported(lowered({"s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  EXPECT_EQ(decide_cell(in).evidence, "no object was written");

  CompileReport object;
  object.from_object = true;
  Attempt clean = reported(object);
  in.object = &clean;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.mc_check, "MC assembler rejects it: invalid image_gather dmask");

  object.undefined = {"__x"};
  Attempt undefined = reported(object);
  in.object = &undefined;
  EXPECT_EQ(decide_cell(in).status, Status::kArchAbsent);

  object.undefined.clear();
  object.object_error = "truncated";
  Attempt unreadable = reported(object);
  in.object = &unreadable;
  EXPECT_EQ(decide_cell(in).evidence, "unreadable object: truncated");
}

TEST(Decide, ACrashAfterSelectingAnInstructionWithNoEncodingIsArchAbsentAndOnlyTheCallsCount) {
  CellInputs in = resolved_inputs();
  in.target = "gfx1030";
  Attempt crash = died(EndKind::kSignal, "SIGSEGV", "Branch relaxation pass");
  in.probe = &crash;
  CompileReport selected = lowered({});
  selected.selected = {"S_LOAD_DWORD_IMM", "S_BARRIER_SIGNAL_IMM", "S_ENDPGM"};
  selected.unencodable = {{"S_BARRIER_SIGNAL_IMM", "s_barrier_signal", "instruction not supported on this GPU"}};
  CompileReport base = lowered({});
  base.selected = {"S_LOAD_DWORD_IMM", "S_ENDPGM"};
  Attempt selection = reported(selected), baseline_selection = reported(base);
  in.selection = &selection;
  in.baseline_selection = &baseline_selection;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kArchAbsent);
  EXPECT_EQ(c.evidence,
            "LLVM selects S_BARRIER_SIGNAL_IMM (s_barrier_signal), which has no encoding on this processor (LLVM's assembler: "
            "instruction not supported on this GPU); compiling on, LLVM crashed: SIGSEGV in pass 'Branch relaxation pass'");
  // What the baseline has too is not the call's: the crash stands.
  base.selected.push_back("S_BARRIER_SIGNAL_IMM");
  baseline_selection = reported(base);
  EXPECT_EQ(decide_cell(in).status, Status::kToolchainCrash);
  // Without a baseline's selection nothing is decided.
  in.baseline_selection = nullptr;
  EXPECT_EQ(decide_cell(in).status, Status::kToolchainCrash);
}

TEST(Decide, ACallThatLowersOnAProcessorWhoseEveryKernelTheAssemblerRejectsIsNoAnswer) {
  CellInputs in = resolved_inputs();
  Attempt probe = reported(lowered({"v_alignbyte_b32", "s_wait_xcnt", "s_endpgm"}));
  probe.report->mc_errors = {"instruction not supported on this GPU (gfx1310): s_wait_xcnt: s_wait_xcnt 0x0"};
  Attempt base = reported(lowered({"s_wait_xcnt", "s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  in.target_defect = "LLVM 23.1.4 writes s_wait_xcnt into every kernel for gfx1310, which its own assembler rejects";
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kTargetUnsupported);
  EXPECT_EQ(c.evidence, in.target_defect);
  EXPECT_TRUE(c.lowered_to.empty());
  // A refusal is still an answer there.
  CompileReport refused = lowered({});
  refused.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  Attempt no = reported(refused);
  in.probe = &no;
  EXPECT_EQ(decide_cell(in).status, Status::kArchAbsent);
}

// A crash or hang before selection is decided where the same call lowers elsewhere (decide.h): the instruction
// every lowering has, beyond moves, waits and nops, asked of the processor's assembler.
TEST(Decide, ACrashBeforeSelectionIsDecidedByTheInstructionTheCallBecomesElsewhere) {
  auto cell = [](const std::string& target, Status s, std::vector<std::string> lowered, Cause cause = Cause::kNone) {
    Cell c;
    c.key = "llvm.amdgcn.image.load.1d";
    c.target = target;
    c.status = s;
    c.lowered_to = std::move(lowered);
    c.cause = cause;
    if (s == Status::kToolchainCrash) c.evidence = "LLVM crashed: SIGSEGV in pass 'AMDGPU DAG->DAG Pattern Instruction Selection'";
    return c;
  };
  std::vector<Cell> cells = {cell("gfx1201", Status::kOk, {"s_mov_b32", "image_load", "s_wait_loadcnt"}),
                             cell("gfx90a", Status::kOk, {"s_nop", "image_load", "s_waitcnt"}),
                             cell("gfx1250", Status::kToolchainCrash, {}, Cause::kCrash),
                             cell("gfx1251", Status::kToolchainCrash, {}, Cause::kCrash),
                             cell("gfx1252", Status::kToolchainCrash, {}, Cause::kCrash),
                             cell("gfx1253", Status::kToolchainCrash, {}, Cause::kDeclaration)};
  std::vector<std::pair<std::string, std::string>> asked;
  auto refusal = [&](const std::string& target, const std::string& mnemonic) {
    asked.push_back({target, mnemonic});
    // gfx1252 refuses only the plumbing (as gfx12 refuses s_waitcnt): no answer from that.
    if (target == "gfx1252") return std::string(mnemonic == "s_waitcnt" ? "instruction not supported on this GPU" : "");
    return std::string(mnemonic == "image_load" ? "instruction not supported on this GPU" : "");
  };
  std::vector<Cell*> all;
  for (Cell& c : cells) all.push_back(&c);
  decide_from_lowerings(all, [](const Cell& c) { return c.target != "gfx1251"; }, refusal);
  EXPECT_EQ(cells[2].status, Status::kArchAbsent);
  EXPECT_EQ(cells[2].cause, Cause::kInstructionAbsent);
  EXPECT_EQ(cells[2].evidence,
            "wherever this call lowers it becomes image_load, which has no encoding on this processor (LLVM's "
            "assembler: instruction not supported on this GPU); here, LLVM crashed: SIGSEGV in pass 'AMDGPU "
            "DAG->DAG Pattern Instruction Selection'");
  EXPECT_EQ(cells[3].status, Status::kToolchainCrash) << "LLVM's selection was read there: not this rule's";
  EXPECT_EQ(cells[4].status, Status::kToolchainCrash) << "only the call's own instruction decides";
  EXPECT_EQ(cells[5].status, Status::kToolchainCrash) << "LLVM died on the declaration itself";
  for (const auto& [target, mnemonic] : asked) EXPECT_EQ(mnemonic, "image_load") << target;
  EXPECT_EQ(cells[0].status, Status::kOk);

  // Where the call lowers nowhere, or every lowering's instructions are the processor's, nothing changes.
  std::vector<Cell> nowhere = {cell("gfx1250", Status::kToolchainCrash, {}, Cause::kCrash),
                               cell("gfx90a", Status::kArchAbsent, {}, Cause::kRefusal)};
  std::vector<Cell*> some = {&nowhere[0], &nowhere[1]};
  decide_from_lowerings(some, [](const Cell&) { return true; }, refusal);
  EXPECT_EQ(nowhere[0].status, Status::kToolchainCrash);
  std::vector<Cell> known = {cell("gfx90a", Status::kOk, {"image_load"}), cell("gfx705", Status::kToolchainCrash, {}, Cause::kCrash)};
  some = {&known[0], &known[1]};
  decide_from_lowerings(some, [](const Cell&) { return true; }, [](const std::string&, const std::string&) { return std::string(); });
  EXPECT_EQ(known[1].status, Status::kToolchainCrash);
}

TEST(Decide, NonProbedCells) {
  CellInputs in = resolved_inputs();
  in.target_known = false;
  Cell unknown = decide_cell(in);
  EXPECT_EQ(unknown.status, Status::kTargetUnsupported);
  EXPECT_EQ(unknown.evidence, "LLVM 22.1.8 does not know processor 'gfx90a'");

  in = resolved_inputs();
  in.resolution.kind = Resolution::Kind::kNameAbsent;
  in.resolution.intrinsic = "";
  in.resolution.evidence = "not an intrinsic";
  Cell absent = decide_cell(in);
  EXPECT_EQ(absent.status, Status::kNameAbsent);
  EXPECT_EQ(absent.intrinsic, "llvm.amdgcn.k");

  in = resolved_inputs();
  WorkerEnd death;
  death.how = EndKind::kSignal;
  death.message = "SIGSEGV";
  in.resolve_death = death;
  Cell read = decide_cell(in);
  EXPECT_EQ(read.status, Status::kToolchainCrash);
  EXPECT_EQ(read.evidence, "reading the declaration: LLVM crashed: SIGSEGV");

  in = resolved_inputs();
  EXPECT_EQ(decide_cell(in).evidence, "never compiled");
}

}  // namespace
}  // namespace archdb
