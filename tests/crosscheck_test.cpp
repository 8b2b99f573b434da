// tests/crosscheck_test.cpp — the census held against facts from LLVM's tests (db/crosscheck.h): how a fact finds
// its census instantiation, what agrees, what is a false answer and what is left out; the facts file's errors.
#include <gtest/gtest.h>

#include "db/crosscheck.h"
#include "support/error.h"

namespace archdb {
namespace {

Cell cell(const std::string& key, const std::string& target, Status s, std::vector<std::string> lowered = {}) {
  Cell c;
  c.key = key;
  c.target = target;
  c.status = s;
  c.intrinsic = key;
  c.lowered_to = std::move(lowered);
  if (s != Status::kOk) c.evidence = "LLVM ERROR: Cannot select";
  return c;
}

Census small_census() {
  Census c;
  c.provenance.processors = {"gfx900", "gfx90a"};
  c.instantiations = {{"llvm.amdgcn.ds.append.p1", "llvm.amdgcn.ds.append", {"ptr addrspace(1)"}},
                      {"llvm.amdgcn.ds.append.p3", "llvm.amdgcn.ds.append", {"ptr addrspace(3)"}},
                      {"llvm.amdgcn.mfma.x", "llvm.amdgcn.mfma.x", {}}};
  c.cells = {cell("llvm.amdgcn.ds.append.p1", "gfx900", Status::kArchAbsent),
             cell("llvm.amdgcn.ds.append.p1", "gfx90a", Status::kArchAbsent),
             cell("llvm.amdgcn.ds.append.p3", "gfx900", Status::kOk, {"ds_append"}),
             cell("llvm.amdgcn.ds.append.p3", "gfx90a", Status::kToolchainCrash),
             cell("llvm.amdgcn.mfma.x", "gfx900", Status::kArchAbsent),
             cell("llvm.amdgcn.mfma.x", "gfx90a", Status::kOk, {"v_mfma_x"})};
  c.sort();
  return c;
}

std::string fact(const std::string& intrinsic, const std::string& processor, const std::string& expect) {
  return intrinsic + "\t" + processor + "\t" + expect + "\tO2\tsdag\tamdgcn\t-\tllvm/llvm-project:x.ll@abc:1\t-\n";
}

const FactComparison& find(const CrossCheck& c, const std::string& intrinsic, const std::string& target) {
  for (const auto& x : c.comparisons)
    if (x.intrinsic == intrinsic && x.target == target) return x;
  throw std::runtime_error("no comparison " + intrinsic + "/" + target);
}

TEST(CrossCheck, AFactsOwnMeasuredDeclarationAnswersItInsteadOfAnotherInstantiation) {
  // ds.append.p2 was not measured by the census; its own declaration, measured (--measure), is refused on gfx900.
  std::vector<TestFact> facts = parse_test_facts(fact("llvm.amdgcn.ds.append.p2", "gfx900", "lowers") +
                                                     fact("llvm.amdgcn.ds.append.p1", "gfx900", "lowers"),
                                                 "facts.tsv");
  MeasuredFacts measured;
  measured["llvm.amdgcn.ds.append.p2"]["gfx900"] = cell("llvm.amdgcn.ds.append.p2", "gfx900", Status::kArchAbsent);
  measured["llvm.amdgcn.ds.append.p1"]["gfx900"] = cell("llvm.amdgcn.ds.append.p1", "gfx900", Status::kOk, {"ds_append"});
  CrossCheck c = cross_check(small_census(), facts, &measured);
  const auto& own = find(c, "llvm.amdgcn.ds.append.p2", "gfx900");
  EXPECT_TRUE(own.measured);
  EXPECT_EQ(own.outcome, FactOutcome::kFalseAbsent) << own.census_answer;
  // An instantiation the census measured exactly is answered by the census, not by a measurement.
  const auto& exact = find(c, "llvm.amdgcn.ds.append.p1", "gfx900");
  EXPECT_FALSE(exact.measured);
  EXPECT_EQ(exact.outcome, FactOutcome::kFalseAbsent);
  // Without the measurements, the intrinsic's other instantiations answer (p3 lowers).
  EXPECT_EQ(find(cross_check(small_census(), facts), "llvm.amdgcn.ds.append.p2", "gfx900").outcome, FactOutcome::kAgrees);
}

TEST(CrossCheck, AFactOnAProcessorWhoseEveryKernelTheAssemblerRejectsIsNotCounted) {
  // LLVM's test holds llc's output; on a processor the census notes (its assembler rejects every kernel there) the
  // census's non-answer is the processor's defect, neither an agreement nor a disagreement.
  Census census = small_census();
  for (Cell& c : census.cells)
    if (c.target == "gfx90a") c.status = Status::kTargetUnsupported;
  census.provenance.processor_notes["gfx90a"] = "LLVM writes s_wait_xcnt into every kernel for gfx90a";
  std::vector<TestFact> facts = parse_test_facts(fact("llvm.amdgcn.mfma.x", "gfx90a", "lowers") +
                                                     fact("llvm.amdgcn.mfma.x", "gfx900", "refused"),
                                                 "facts.tsv");
  CrossCheck c = cross_check(census, facts);
  EXPECT_EQ(find(c, "llvm.amdgcn.mfma.x", "gfx90a").outcome, FactOutcome::kProcessorDefect);
  EXPECT_EQ(find(c, "llvm.amdgcn.mfma.x", "gfx90a").census_answer, "LLVM writes s_wait_xcnt into every kernel for gfx90a");
  EXPECT_EQ(c.compared(), 1);
  EXPECT_EQ(c.agreement(), 1.0);
}

TEST(CrossCheck, AFactBuiltWithOtherFeaturesIsAnsweredOnlyByACellMeasuredWithThem) {
  // The test builds for gfx90a with features that change it: the census's plain gfx90a cell (ok) does not
  // answer it; a cell measured for the featured target does, even for an instantiation the census has.
  std::vector<TestFact> facts = parse_test_facts(fact("llvm.amdgcn.mfma.x", "gfx90a", "refused"), "facts.tsv");
  facts[0].target = "gfx90a:+wavefrontsize32,-wavefrontsize64";
  CrossCheck plain = cross_check(small_census(), facts);
  EXPECT_EQ(plain.comparisons.at(0).outcome, FactOutcome::kOtherFeatures);
  EXPECT_EQ(plain.compared(), 0);
  MeasuredFacts measured;
  measured["llvm.amdgcn.mfma.x"][facts[0].target] = cell("llvm.amdgcn.mfma.x", facts[0].target, Status::kArchAbsent);
  measured["llvm.amdgcn.mfma.x"]["gfx90a"] = cell("llvm.amdgcn.mfma.x", "gfx90a", Status::kArchAbsent);
  CrossCheck c = cross_check(small_census(), facts, &measured);
  const auto& featured = find(c, "llvm.amdgcn.mfma.x", facts[0].target);
  EXPECT_TRUE(featured.measured);
  EXPECT_EQ(featured.outcome, FactOutcome::kAgrees) << featured.census_answer;
  // The same fact without features is the census's (ok: refused is a false ok), not the measurement's.
  facts[0].target = "gfx90a";
  EXPECT_EQ(find(cross_check(small_census(), facts, &measured), "llvm.amdgcn.mfma.x", "gfx90a").outcome,
            FactOutcome::kFalseOk);
}

TEST(CrossCheck, AFactMeetsItsOwnInstantiationOrEveryOneOfItsIntrinsic) {
  std::string text = "# a comment\n" + fact("llvm.amdgcn.ds.append.p1", "gfx900", "lowers") +
                     fact("llvm.amdgcn.ds.append", "gfx900", "lowers") +     // some instantiation lowers: p3 does
                     fact("llvm.amdgcn.ds.append.p2", "gfx900", "lowers") +  // not measured: the intrinsic's
                     fact("llvm.amdgcn.mfma.x", "gfx900", "refused") + fact("llvm.amdgcn.mfma.x", "gfx90a", "refused") +
                     fact("llvm.amdgcn.ds.append.p3", "gfx90a", "lowers") + fact("llvm.amdgcn.mfma.x", "gfx1310", "lowers") +
                     fact("llvm.amdgcn.gone", "gfx900", "lowers") + fact("llvm.amdgcn.mfma.x", "gfx90a", "lowers") +
                     fact("llvm.amdgcn.mfma.x", "gfx90a", "lowers");  // a second RUN line: the same fact
  std::vector<TestFact> facts = parse_test_facts(text, "facts.tsv");
  ASSERT_EQ(facts.size(), 10u);
  CrossCheck c = cross_check(small_census(), facts);

  const auto& exact = find(c, "llvm.amdgcn.ds.append.p1", "gfx900");
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.outcome, FactOutcome::kFalseAbsent);
  const auto& base = find(c, "llvm.amdgcn.ds.append", "gfx900");
  EXPECT_FALSE(base.exact);
  EXPECT_EQ(base.outcome, FactOutcome::kAgrees);
  EXPECT_EQ(base.census_key, "llvm.amdgcn.ds.append.p1, llvm.amdgcn.ds.append.p3");
  EXPECT_EQ(find(c, "llvm.amdgcn.ds.append.p2", "gfx900").outcome, FactOutcome::kAgrees);
  EXPECT_EQ(find(c, "llvm.amdgcn.ds.append.p3", "gfx90a").outcome, FactOutcome::kNoAnswer);

  EXPECT_EQ(find(c, "llvm.amdgcn.mfma.x", "gfx1310").outcome, FactOutcome::kUnknownProcessor);
  EXPECT_EQ(find(c, "llvm.amdgcn.gone", "gfx900").outcome, FactOutcome::kNotInCensus);
  for (const auto& x : c.comparisons) {
    if (x.intrinsic != "llvm.amdgcn.mfma.x" || x.target != "gfx90a") continue;
    if (x.lowers) {
      EXPECT_EQ(x.outcome, FactOutcome::kAgrees);
      EXPECT_EQ(x.facts.size(), 2u);
    } else {
      EXPECT_EQ(x.outcome, FactOutcome::kFalseOk);
    }
  }
  EXPECT_EQ(find(c, "llvm.amdgcn.mfma.x", "gfx900").outcome, FactOutcome::kAgrees);
  // agrees: ds.append, ds.append.p2, mfma.x/gfx900 refused, mfma.x/gfx90a lowers; false: p1/gfx900 absent,
  // mfma.x/gfx90a refused; no answer: p3/gfx90a. Unknown processor and missing intrinsic are left out.
  EXPECT_EQ(c.compared(), 7);
  EXPECT_NEAR(c.agreement(), 4.0 / 7.0, 1e-9);
}

TEST(CrossCheck, AMalformedFactsFileIsRefusedNamingTheLineAndField) {
  try {
    parse_test_facts(fact("llvm.amdgcn.x", "gfx900", "maybe"), "facts.tsv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("facts.tsv:1: field 'expect'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_test_facts("a\tb\n", "facts.tsv"), Error);
  EXPECT_THROW(parse_test_facts(fact("llvm.nvvm.x", "gfx900", "lowers"), "facts.tsv"), Error);
}

}  // namespace
}  // namespace archdb
