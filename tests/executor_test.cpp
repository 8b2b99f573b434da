// tests/executor_test.cpp — the measuring phases (probe/probe.h) against a scripted executor: what they hand
// the executor, how (batches, alone, the retry's budget, objects), and the cells they make of the answers. No
// workers here; probe_test.cpp measures the same rules with the real LLVM.
#include <gtest/gtest.h>

#include "probe/probe.h"
#include "tests/scripted_executor.h"

namespace archdb {
namespace {

using testing::ScriptedExecutor;

// One key: llvm.amdgcn.k(i32 %data, i32 immarg) -> i32.
struct OneKey {
  OneKey() {
    catalog.path = "(test)";
    CatalogEntry e;
    e.key = "k";
    e.spec.kind = DeclSpec::Kind::kIntrinsic;
    e.spec.name = "llvm.amdgcn.k";
    catalog.entries.push_back(e);
    entries.push_back(&catalog.entries.front());
    options.flavor = "llvm22";
    options.targets = {"gfx90a"};
  }
  static ResolveAttempt resolved(const DeclSpec&) {
    Resolution r;
    r.kind = Resolution::Kind::kResolved;
    r.intrinsic = "llvm.amdgcn.k";
    r.shape.callee = "llvm.amdgcn.k";
    r.shape.declare_line = "declare i32 @\"llvm.amdgcn.k\"(i32, i32 immarg)";
    r.shape.return_type = "i32";
    r.shape.params = {{"i32", false}, {"i32", true}};
    return ResolveAttempt{r, std::nullopt};
  }
  Catalog catalog;
  std::vector<const CatalogEntry*> entries;
  ProbeOptions options;
};

Attempt lowered(std::vector<std::string> mnemonics, std::vector<std::string> mc_errors = {}) {
  CompileReport r;
  r.mnemonics = std::move(mnemonics);
  r.cross_checked = true;
  r.mc_errors = std::move(mc_errors);
  return Attempt{r, std::nullopt};
}
Attempt refused(std::string message) {
  CompileReport r;
  r.refused = std::move(message);
  return Attempt{r, std::nullopt};
}
Attempt crashed(std::string pass) {
  WorkerEnd end;
  end.how = EndKind::kSignal;
  end.message = "SIGSEGV";
  end.pass = std::move(pass);
  return Attempt{std::nullopt, end};
}
bool is_baseline(const Kernel& k) { return k.declare_line.empty(); }

TEST(Phases, ACrashIsRetriedAloneWithTheRetryBudgetAndARepeatedCrashIsTheCell) {
  OneKey t;
  ScriptedExecutor executor(
      [](const Kernel& k, const CompileHow&) { return is_baseline(k) ? lowered({"s_endpgm"}) : crashed("Branch relaxation pass"); },
      OneKey::resolved);
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  ASSERT_EQ(result.column.cells.size(), 1u);
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kToolchainCrash);
  EXPECT_EQ(c.evidence, "LLVM crashed: SIGSEGV in pass 'Branch relaxation pass'");
  auto probes = executor.of("gfx90a", "p0");
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_FALSE(probes[0].how.retry);
  EXPECT_GT(probes[0].how.batch, 1u);
  EXPECT_TRUE(probes[1].how.retry);  // the retry's CPU budget
  EXPECT_EQ(probes[1].how.batch, 1u);
  EXPECT_TRUE(probes[1].how.serial);  // a column's retries run one at a time
  EXPECT_TRUE(probes[1].how.fresh);   // in a worker that compiled nothing before
  // After the retry crashed again, the kernel and its baseline are compiled up to the end of selection; the
  // kernel crashes there too (this script crashes every kernel but a baseline), so again up to just before
  // finalize-isel.
  auto selections = executor.of("gfx90a", "p0_sel");
  ASSERT_EQ(selections.size(), 2u);
  EXPECT_EQ(selections[0].how.selection, Job::Selection::kAfterFinalize);
  EXPECT_EQ(selections[1].how.selection, Job::Selection::kBeforeFinalize);
  EXPECT_TRUE(selections[0].how.fresh);
  EXPECT_EQ(executor.of("gfx90a", "b0_sel").size(), 1u);
  // A crash after selection is about the instruction selected: no posing is tried.
  for (const auto& k : executor.compiled) EXPECT_EQ(k.kernel.function.find("_q"), std::string::npos) << k.kernel.function;
  EXPECT_EQ(result.stats.retried, 1);
}

TEST(Phases, ACrashTheRetryDoesNotRepeatIsAnsweredByTheRetry) {
  OneKey t;
  t.options.parallel_crash_retries = true;  // as the census retries
  int probes = 0;
  ScriptedExecutor executor(
      [&](const Kernel& k, const CompileHow&) {
        if (is_baseline(k)) return lowered({"s_endpgm"});
        return probes++ == 0 ? crashed("Branch relaxation pass") : lowered({"v_k_b32", "s_endpgm"});
      },
      OneKey::resolved);
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kOk) << c.evidence;
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"v_k_b32"});
  auto retry = executor.of("gfx90a", "p0").back();
  EXPECT_FALSE(retry.how.serial);  // a census's crashes are retried on the parallel workers, each alone
  EXPECT_EQ(retry.how.batch, 1u);
  // The baseline is compiled once, after the probe lowered.
  EXPECT_EQ(executor.of("gfx90a", "b0").size(), 1u);
}

TEST(Phases, ARefusalIsPosedAgainUntilAPosingLowersAndTheCellSaysWhich) {
  OneKey t;
  ScriptedExecutor executor(
      [](const Kernel& k, const CompileHow&) {
        if (is_baseline(k)) return lowered({"s_endpgm"});
        if (k.function == "p0") return refused("Cannot select: t7: i32 = AMDGPUISD::K");
        if (k.function == "p0_q0") return refused("Cannot select: t9: i32 = AMDGPUISD::OTHER");  // the sweep's 1
        return lowered({"v_k_b32", "s_endpgm"});                                             // its 2
      },
      OneKey::resolved);
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kOk) << c.evidence;
  EXPECT_EQ(c.posed->imm, std::vector<int64_t>{2});
  EXPECT_EQ(c.lowered_to, std::vector<std::string>{"v_k_b32"});
  ASSERT_EQ(executor.of("gfx90a", "p0_q1").size(), 1u);
  EXPECT_NE(executor.of("gfx90a", "p0_q1")[0].kernel.ir.find("i32 2)"), std::string::npos);
  EXPECT_TRUE(executor.of("gfx90a", "p0_q2").empty());  // decided: nothing more is posed
  EXPECT_EQ(result.stats.posed_refused, 2);
}

TEST(Phases, AnUnchangedRefusalEndsTheSweepAndTheEvidenceNamesWhatWasTried) {
  OneKey t;
  ScriptedExecutor executor(
      [](const Kernel& k, const CompileHow&) {
        return is_baseline(k) ? lowered({"s_endpgm"}) : refused("Cannot select: intrinsic %llvm.amdgcn.k");
      },
      OneKey::resolved);
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kArchAbsent);
  EXPECT_EQ(c.evidence, "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.k (immarg sweep 1: none lowers)");
  EXPECT_TRUE(executor.of("gfx90a", "b0").empty());  // nothing lowered: no baseline is compiled
}

TEST(Phases, WhatTheAssemblerRejectsIsCompiledToAnObjectWhichDecides) {
  OneKey t;
  ScriptedExecutor executor(
      [](const Kernel& k, const CompileHow& how) {
        if (is_baseline(k)) return lowered({"s_endpgm"});
        if (how.emit_object) {
          CompileReport r;
          r.from_object = true;
          return Attempt{r, std::nullopt};
        }
        return lowered({"v_k_b32", "s_endpgm"}, {"<stdin>:3:1: error: invalid operand for instruction"});
      },
      OneKey::resolved);
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.mc_check, "MC assembler rejects it: <stdin>:3:1: error: invalid operand for instruction");
  auto objects = executor.of("gfx90a", "p0_obj");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_TRUE(objects[0].how.emit_object);
}

TEST(Phases, ADeclarationLlvmDiesReadingIsResolvedAgainAndThenACrash) {
  OneKey t;
  int reads = 0;
  ScriptedExecutor executor([](const Kernel&, const CompileHow&) { return lowered({"s_endpgm"}); },
                            [&](const DeclSpec&) {
                              ++reads;
                              WorkerEnd end;
                              end.how = EndKind::kSignal;
                              end.message = "SIGSEGV";
                              return ResolveAttempt{std::nullopt, end};
                            });
  ProbeResult result = run_probe(t.catalog, t.entries, t.options, executor);
  EXPECT_EQ(reads, 2);  // once, and once more
  const Cell& c = result.column.cells.front();
  EXPECT_EQ(c.status, Status::kToolchainCrash);
  EXPECT_EQ(c.evidence, "reading the declaration: LLVM crashed: SIGSEGV");
  EXPECT_TRUE(executor.compiled.empty());
}

}  // namespace
}  // namespace archdb
