// tests/posing_search_test.cpp — the posing strategies (probe/posing_search.h) judged on made-up trials: what
// each proposes, in what order, and which trial decides it. No LLVM and no workers here.
#include <gtest/gtest.h>

#include "probe/posing_search.h"

namespace archdb {
namespace {

// llvm.amdgcn.k(i32 %data, i32 immarg, i1 immarg) -> i32, with side effects: an atomic-like call.
ProbeShape shape_with_two_immediates() {
  ProbeShape s;
  s.callee = "llvm.amdgcn.k";
  s.declare_line = "declare i32 @\"llvm.amdgcn.k\"(i32, i32 immarg, i1 immarg)";
  s.return_type = "i32";
  s.params = {{"i32", false}, {"i32", true}, {"i1", true}};
  s.has_side_effects = true;
  return s;
}

Outcome refused(std::string message) {
  Outcome o;
  o.status = Status::kArchAbsent;
  o.cause = Outcome::Cause::kRefusal;
  o.message = std::move(message);
  return o;
}

Trial refusal_trial(std::string message) { return Trial{refused(std::move(message)), false, false}; }

Trial lowered_trial(bool instruction = true, bool assembled = true) {
  Trial t;
  t.outcome.status = Status::kOk;
  t.outcome.cause = Outcome::Cause::kLowered;
  t.instruction = instruction;
  t.assembled = assembled;
  return t;
}

Trial crash_trial(std::string pass = "Branch relaxation pass") {
  Trial t;
  t.outcome.status = Status::kToolchainCrash;
  t.outcome.cause = Outcome::Cause::kCrash;
  t.outcome.message = "SIGSEGV";
  t.outcome.pass = std::move(pass);
  return t;
}

Trial hang_trial() {
  Trial t;
  t.outcome.status = Status::kToolchainTimeout;
  t.outcome.cause = Outcome::Cause::kTimeout;
  t.outcome.cpu_budget_ms = 100;
  return t;
}

std::string show(const Posing& p) {
  std::string s;
  for (int64_t v : p.imm) s += (s.empty() ? "" : ",") + std::to_string(v);
  if (p.uniform) s += " uniform";
  if (p.result_unused) s += " unused";
  return s;
}

// Everything the search proposes while every trial is judged with `judge`.
std::vector<std::string> proposals(PosingSearch& search, const std::function<Trial(const Posing&)>& judge) {
  std::vector<std::string> out;
  while (auto p = search.next()) {
    out.push_back(show(p->posing));
    search.judge(judge(p->posing));
  }
  return out;
}

const std::vector<int64_t> kSweep = {1, 2, 4};

TEST(PosingSearch, ARefusalThatDoesNotChangeStopsTheSweepThenTriesUniformUnusedAndEachImmediate) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto search = refusal_search(shape, base, refused("Cannot select: t3: i32 = AMDGPUISD::K"), kSweep);
  std::vector<std::string> tried = proposals(*search, [](const Posing&) { return refusal_trial("Cannot select: t3: i32 = AMDGPUISD::K"); });
  // The sweep's 1 is refused alike: its 2 and 4 are not tried; each immediate alone tries 1 and 16777217 (an i32),
  // the flag only 1.
  EXPECT_EQ(tried, (std::vector<std::string>{"1,1", "0,0 uniform", "0,0 unused", "1,0", "16777217,0", "0,1"}));
  EXPECT_FALSE(search->decided());
  EXPECT_EQ(search->tried().size(), tried.size());
}

TEST(PosingSearch, ARefusalOfTheIntrinsicItselfOnlySweepsTheImmediates) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto search = refusal_search(shape, base, refused("Cannot select: intrinsic %llvm.amdgcn.k"), kSweep);
  // Each sweep value refused otherwise than the default goes on to the next.
  int n = 0;
  std::vector<std::string> tried = proposals(*search, [&](const Posing&) { return refusal_trial("other " + std::to_string(n++)); });
  EXPECT_EQ(tried, (std::vector<std::string>{"1,1", "2,2", "4,4"}));
}

TEST(PosingSearch, ThePosingThatLowersDecidesAndNothingMoreIsProposed) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto search = refusal_search(shape, base, refused("Cannot select: t3: i32 = AMDGPUISD::K"), kSweep);
  std::vector<std::string> tried = proposals(*search, [](const Posing& p) {
    return p.result_unused ? lowered_trial() : refusal_trial("Cannot select: t3: i32 = AMDGPUISD::K");
  });
  EXPECT_EQ(tried, (std::vector<std::string>{"1,1", "0,0 uniform", "0,0 unused"}));
  ASSERT_TRUE(search->decided());
  EXPECT_TRUE(search->solution()->result_unused);
  EXPECT_FALSE(search->next());
}

TEST(PosingSearch, AnImmediateThatChangesTheObjectionIsTheBaseOfTheNextTries) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto search = refusal_search(shape, base, refused("dword count must be between 1 and 4"), kSweep);
  std::vector<std::string> tried = proposals(*search, [](const Posing& p) {
    if (p.imm == std::vector<int64_t>{16777217, 1}) return lowered_trial();
    if (p.imm[0] == 16777217) return refusal_trial("wave_done requires wave_release");
    return refusal_trial("dword count must be between 1 and 4");
  });
  // 16777217 answered the first objection: the flag is tried from it, before the first's own flag.
  EXPECT_EQ(tried, (std::vector<std::string>{"1,1", "0,0 uniform", "0,0 unused", "1,0", "16777217,0", "16777217,1"}));
  ASSERT_TRUE(search->decided());
  EXPECT_EQ(search->solution()->imm, (std::vector<int64_t>{16777217, 1}));
}

TEST(PosingSearch, NoKernelIsProposedTwice) {
  ProbeShape shape = shape_with_two_immediates();
  // The default posing already sets every immediate to 1: the sweep's 1 writes the same kernel.
  Posing base = default_posing(shape, 1);
  auto search = lowering_search(PosingSearch::Why::kNoInstruction, shape, base, kSweep);
  std::vector<std::string> tried = proposals(*search, [](const Posing&) { return lowered_trial(false); });
  EXPECT_EQ(tried, (std::vector<std::string>{"32,1", "2,2", "4,4"}));
}

TEST(PosingSearch, ACallThatBecameNothingIsDecidedByAnInstructionOrByARefusalAskingTheLeastWork) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto instruction = lowering_search(PosingSearch::Why::kNoInstruction, shape, base, kSweep);
  proposals(*instruction, [](const Posing& p) { return lowered_trial(p.imm[0] == 32); });
  ASSERT_TRUE(instruction->decided());
  EXPECT_EQ(instruction->solution()->imm, (std::vector<int64_t>{32, 0}));

  auto refusal = lowering_search(PosingSearch::Why::kNoInstruction, shape, base, kSweep);
  std::vector<std::string> tried =
      proposals(*refusal, [](const Posing&) { return refusal_trial("Cannot select: intrinsic %llvm.amdgcn.k"); });
  // Asked for one channel (1), the processor refuses the intrinsic: that decides.
  EXPECT_EQ(tried, (std::vector<std::string>{"1,0"}));
  EXPECT_TRUE(refusal->decided());

  // Asked for more than the least work, a refusal of the intrinsic decides nothing, and closes the sweep.
  auto wide = lowering_search(PosingSearch::Why::kNoInstruction, shape, base, {16, 32});
  tried = proposals(*wide, [](const Posing& p) {
    return p.imm[0] == 1 || p.imm[1] == 1 ? lowered_trial(false) : refusal_trial("Cannot select: intrinsic %llvm.amdgcn.k");
  });
  EXPECT_EQ(tried, (std::vector<std::string>{"1,0", "32,0", "0,1", "16,16"}));
  EXPECT_FALSE(wide->decided());
}

TEST(PosingSearch, WhatTheAssemblerRejectedIsDecidedOnlyByWhatItAccepts) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  auto search = lowering_search(PosingSearch::Why::kRejectedAssembly, shape, base, kSweep);
  std::vector<std::string> tried = proposals(*search, [](const Posing& p) { return lowered_trial(true, p.imm[0] == 7); });
  EXPECT_EQ(tried, (std::vector<std::string>{"1,0", "3,0", "7,0"}));
  EXPECT_EQ(search->solution()->imm, (std::vector<int64_t>{7, 0}));
}

TEST(PosingSearch, AHangDecidesALoweringSearchAndIsRetriedFirst) {
  ProbeShape shape = shape_with_two_immediates();
  auto lowering = lowering_search(PosingSearch::Why::kNoInstruction, shape, default_posing(shape, 0), kSweep);
  EXPECT_TRUE(lowering->retries_hangs());
  proposals(*lowering, [](const Posing&) { return hang_trial(); });
  EXPECT_TRUE(lowering->decided());
  auto refusal = refusal_search(shape, default_posing(shape, 0), refused("x"), kSweep);
  EXPECT_FALSE(refusal->retries_hangs());
}

TEST(PosingSearch, CrashesAreRememberedAndACrashLikeTheDefaultsClosesItsOperand) {
  ProbeShape shape = shape_with_two_immediates();
  Posing base = default_posing(shape, 0);
  Outcome crash = crash_trial("AMDGPU DAG->DAG Pattern Instruction Selection").outcome;
  auto search = lowering_search(PosingSearch::Why::kCrashed, shape, base, kSweep, &crash);
  std::vector<std::string> tried =
      proposals(*search, [](const Posing&) { return crash_trial("AMDGPU DAG->DAG Pattern Instruction Selection"); });
  // The first operand's 1 crashes as the default did: its 32 is not tried; nor the sweep's values past its 1.
  EXPECT_EQ(tried, (std::vector<std::string>{"1,0", "0,1", "1,1"}));
  ASSERT_TRUE(search->first_crash());
  EXPECT_EQ(show(search->first_crash()->posing), "1,0");
  EXPECT_EQ(search->first_crash()->index, 0u);
  EXPECT_FALSE(search->decided());
}

}  // namespace
}  // namespace archdb
