// tests/verdict_test.cpp — the parent-worker messages round-trip through their one encoder and decoder, and
// the verdict rules turn made-up reports into cells: no LLVM and no workers here (probe_test.cpp has those).
#include <gtest/gtest.h>

#include "probe/job.h"
#include "probe/verdict.h"

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

Attempt died(EndKind how, std::string message, std::string pass = "") {
  WorkerEnd end;
  end.how = how;
  end.message = std::move(message);
  end.pass = std::move(pass);
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
  auto again = decode_report(encode_report(LastWords{EndKind::kFatal, "f", "p", "m"}));
  EXPECT_EQ(std::get<LastWords>(*again).how, EndKind::kFatal);
  // Cut to fit a small buffer, they still decode.
  std::string long_message(2000, 'x');
  char small[64];
  size_t m = encode_last_words(small, sizeof small, EndKind::kTimeout, "p", "pass", long_message.c_str());
  ASSERT_LE(m, sizeof small);
  auto cut = decode_report(std::string(small, m));
  ASSERT_TRUE(cut && std::holds_alternative<LastWords>(*cut)) << std::string(small, m);
  EXPECT_EQ(std::get<LastWords>(*cut).how, EndKind::kTimeout);
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

TEST(Verdict, RefusalIsArchAbsentAndOtherFatalErrorsAreCrashes) {
  EXPECT_EQ(verdict_of(died(EndKind::kFatal, "Cannot select: intrinsic %llvm.amdgcn.k"), 60).status, Status::kArchAbsent);
  Verdict crash = verdict_of(died(EndKind::kFatal, "Broken function found", "Verifier"), 60);
  EXPECT_EQ(crash.status, Status::kToolchainCrash);
  EXPECT_EQ(crash.evidence, "LLVM ERROR: Broken function found in pass 'Verifier'");
  EXPECT_EQ(verdict_of(died(EndKind::kSignal, "SIGSEGV", "Branch relaxation pass"), 60).evidence,
            "LLVM crashed: SIGSEGV in pass 'Branch relaxation pass'");
  EXPECT_EQ(verdict_of(died(EndKind::kTimeout, "no answer within 50 ms of CPU time"), 60).evidence,
            "no answer within 50 ms of CPU time");
  EXPECT_EQ(verdict_of(died(EndKind::kTimeout, ""), 7).evidence, "no answer within 7 s");
  EXPECT_EQ(verdict_of(died(EndKind::kJobError, "does not parse"), 60).status, Status::kProbeError);
  EXPECT_EQ(verdict_of(died(EndKind::kExit, "worker exited with status 3"), 60).status, Status::kToolchainCrash);
  EXPECT_EQ(verdict_of(Attempt{}, 60).status, Status::kProbeError);
}

TEST(Verdict, ReportedRefusalDiagnosticAndUndefinedSymbolAreArchAbsent) {
  CompileReport refused = lowered({});
  refused.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  EXPECT_EQ(verdict_of(reported(refused), 60).status, Status::kArchAbsent);
  CompileReport diagnosed = lowered({"v_mov_b32"});
  diagnosed.error = "llvm.amdgcn.k requires target feature 'x'";
  Verdict d = verdict_of(reported(diagnosed), 60);
  EXPECT_EQ(d.status, Status::kArchAbsent);
  EXPECT_EQ(d.evidence, "error: llvm.amdgcn.k requires target feature 'x'");
  CompileReport libcall = lowered({"s_swappc_b64"});
  libcall.undefined = {"__divdi3"};
  Verdict u = verdict_of(reported(libcall), 60);
  EXPECT_EQ(u.status, Status::kArchAbsent);
  EXPECT_EQ(u.evidence, "the call was lowered to a call of undefined symbol __divdi3");
  EXPECT_EQ(verdict_of(reported(lowered({"v_mfma"})), 60).status, Status::kOk);
}

TEST(Verdict, CellOfAResolvedKeyIsTheDifferenceFromItsBaseline) {
  CellInputs in = resolved_inputs();
  Attempt probe = reported(lowered({"s_load", "v_mfma_f32_4x4x4bf16_1k", "s_endpgm"}));
  Attempt base = reported(lowered({"s_load", "s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  Cell c = decide_cell(in);
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"v_mfma_f32_4x4x4bf16_1k"});
  EXPECT_EQ(c.note, "");
  EXPECT_FALSE(c.imm);

  Attempt nothing = reported(lowered({"s_load", "s_endpgm"}));
  in.probe = &nothing;
  EXPECT_EQ(decide_cell(in).note, "the call became no instruction");

  in.baseline = nullptr;
  EXPECT_EQ(decide_cell(in).status, Status::kProbeError);
}

TEST(Verdict, SweepValueThatLoweredMakesTheCellOkAndOtherwiseTheTriedValuesAreNamed) {
  CellInputs in = resolved_inputs();
  CompileReport refused = lowered({});
  refused.refused = "Cannot select: intrinsic %llvm.amdgcn.k";
  Attempt probe = reported(refused);
  Attempt base = reported(lowered({"s_endpgm"}));
  in.probe = &probe;
  in.baseline = &base;
  in.swept = {1, 2};
  Cell absent = decide_cell(in);
  EXPECT_EQ(absent.status, Status::kArchAbsent);
  EXPECT_EQ(absent.evidence, "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.k (immarg sweep 1, 2: none lowers)");

  Attempt swept = reported(lowered({"global_load_lds_dword", "s_endpgm"}));
  in.sweep_value = 2;
  in.sweep_attempt = &swept;
  Cell ok = decide_cell(in);
  EXPECT_EQ(ok.status, Status::kOk);
  EXPECT_EQ(ok.imm, 2);
  EXPECT_EQ(ok.lowered_to, std::vector<std::string>{"global_load_lds_dword"});
}

TEST(Verdict, RejectedAssemblyIsDecidedByTheObject) {
  CellInputs in = resolved_inputs();
  CompileReport printed = lowered({"v_cvt_x", "s_endpgm"});
  printed.mc_errors = {"instruction not supported on this GPU"};
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
  EXPECT_EQ(c.mc_check, "MC assembler rejects it: instruction not supported on this GPU");

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

TEST(Verdict, NonProbedCells) {
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
