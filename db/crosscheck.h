// db/crosscheck.h — the census held against facts nobody here wrote: which intrinsic LLVM's own AMDGPU CodeGen
// tests say lowers (or is refused) on which processor (tests/fixtures/llvm_test_facts.tsv, derived from the
// tests' RUN lines by tools/llvm-test-facts). No LLVM here: a pure comparison of two texts.
//
// A fact names an intrinsic as its test writes it: an instantiation's mangled name, or an overloaded
// intrinsic's base name. It is held against the census instantiation of exactly that name when the census
// measured one; otherwise against every instantiation the census measured of the same intrinsic (an
// overloaded name says only that some instantiation lowers: "lowers" agrees when one of them is ok,
// "refused" when all are arch_absent). A processor this LLVM does not know, or an intrinsic the census does
// not have, leaves the fact out of the figure, counted and listed. A census non-answer (crash, timeout) is a
// fact the census failed to answer: it counts against agreement.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "db/census.h"

namespace archdb {

struct TestFact {
  std::string intrinsic;   // as the test names it
  std::string processor;   // canonical gfx name
  bool lowers = true;      // false: the test expects LLVM to refuse it
  std::string opt, isel, triple, mattr;  // the RUN line's llc flags
  std::string source;      // llvm/llvm-project:<path>@<commit>:<RUN line>
  std::string detail;      // refused: the error the test expects
  std::string declaration;  // the test's declaration, where known ("-" otherwise)
  // The target the RUN line builds for: the processor, or "processor:features" when its -mattr changes what
  // LLVM builds for it (gfx1100:+wavefrontsize64,-wavefrontsize32). The parser sets the processor; the caller,
  // which links LLVM, reduces -mattr to what it changes (canonical_target).
  std::string target;
};

// Throws input_error naming `label`, the line and the field on the first malformed line.
std::vector<TestFact> parse_test_facts(const std::string& text, const std::string& label);

enum class FactOutcome {
  kAgrees,           // the census answers as the test does
  kFalseOk,          // the test says refused, the census ok
  kFalseAbsent,      // the test says lowers, the census arch_absent
  kNoAnswer,         // the census has a non-answer there (crash, timeout)
  kUnknownProcessor, // this LLVM does not know the processor: not counted
  kProcessorDefect,  // the census notes the processor as one LLVM's own assembler rejects every kernel of: not
                     // counted (the test holds llc's output, which this LLVM cannot assemble there)
  kNotInCensus,      // the census has no such intrinsic: not counted
  kOtherFeatures,    // the test builds with features the census does not pose (+wavefrontsize64): not counted
                     // unless measured (--measure), as the checker answers such a target only by measuring it
};
std::string_view fact_outcome_name(FactOutcome o);

struct FactComparison {
  std::string intrinsic, target;  // target: the facts' TestFact::target
  bool lowers = true;
  FactOutcome outcome = FactOutcome::kNotInCensus;
  std::string census_key;    // the instantiation that answered (or "k1, k2" for an overloaded name)
  bool measured = false;     // answered by a cell measured for the test's own declaration
  bool exact = false;        // the census measured exactly the test's name
  std::string census_answer; // status and evidence or lowered_to, one line
  std::vector<const TestFact*> facts;  // the test lines behind it (flags and sources)
};

struct CrossCheck {
  std::vector<FactComparison> comparisons;  // one per (intrinsic, processor, expectation), sorted
  std::map<FactOutcome, int> counts;
  int compared() const;   // agrees + false answers + non-answers
  double agreement() const;  // agrees / compared (0 when nothing compared)
};

// Cells measured for exactly the facts' own declarations (archdb crosscheck --measure): fact intrinsic as the
// test names it -> target (with the fact's features) -> cell. A fact with such a cell is held against it,
// exactly, rather than against the census.
using MeasuredFacts = std::map<std::string, std::map<std::string, Cell>>;

CrossCheck cross_check(const Census& census, const std::vector<TestFact>& facts, const MeasuredFacts* measured = nullptr);

}  // namespace archdb
