// db/crosscheck.cpp — see crosscheck.h.
#include "db/crosscheck.h"

#include <algorithm>
#include <set>

#include "support/error.h"
#include "support/text.h"

namespace archdb {
namespace {

std::string answer_text(const Cell& c) {
  std::string s(status_name(c.status));
  if (c.status == Status::kOk) {
    s += c.lowered_to.empty() ? " (no instruction)" : " (" + join(c.lowered_to, " ") + ")";
  } else if (!c.evidence.empty()) {
    s += ": " + c.evidence;
  }
  return s;
}

// The census instantiations that answer for `name`: exactly it, else every one of the intrinsic it names
// (the longest intrinsic base name that is `name` or a prefix of it at a '.').
std::vector<const CensusInstantiation*> instantiations_for(const Census& census, const std::string& name, bool& exact) {
  exact = false;
  if (const CensusInstantiation* i = census.instantiation(name)) {
    exact = true;
    return {i};
  }
  std::string base;
  for (const auto& i : census.instantiations) {
    const std::string& b = i.intrinsic;
    bool fits = name == b || (name.size() > b.size() && name.compare(0, b.size(), b) == 0 && name[b.size()] == '.');
    if (fits && b.size() > base.size()) base = b;
  }
  std::vector<const CensusInstantiation*> out;
  if (base.empty()) return out;
  for (const auto& i : census.instantiations)
    if (i.intrinsic == base) out.push_back(&i);
  return out;
}

}  // namespace

std::string_view fact_outcome_name(FactOutcome o) {
  switch (o) {
    case FactOutcome::kAgrees: return "agrees";
    case FactOutcome::kFalseOk: return "false_ok";
    case FactOutcome::kFalseAbsent: return "false_arch_absent";
    case FactOutcome::kNoAnswer: return "no_answer";
    case FactOutcome::kUnknownProcessor: return "unknown_processor";
    case FactOutcome::kProcessorDefect: return "processor_defect";
    case FactOutcome::kNotInCensus: return "not_in_census";
    case FactOutcome::kOtherFeatures: return "other_features";
  }
  return "?";
}

std::vector<TestFact> parse_test_facts(const std::string& text, const std::string& label) {
  std::vector<TestFact> out;
  size_t line_no = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split(line, '\t');
    auto where = label + ":" + std::to_string(line_no) + ": ";
    if (f.size() != 9 && f.size() != 10)
      throw input_error(where + "expected 9 or 10 tab-separated fields, found " + std::to_string(f.size()));
    TestFact fact;
    fact.intrinsic = f[0];
    fact.processor = f[1];
    if (f[2] != "lowers" && f[2] != "refused")
      throw input_error(where + "field 'expect' must be lowers or refused, not '" + f[2] + "'");
    fact.lowers = f[2] == "lowers";
    fact.opt = f[3];
    fact.isel = f[4];
    fact.triple = f[5];
    fact.mattr = f[6];
    fact.source = f[7];
    fact.detail = f[8];
    fact.declaration = f.size() == 10 ? f[9] : "-";
    fact.target = fact.processor;
    if (fact.intrinsic.rfind("llvm.amdgcn.", 0) != 0)
      throw input_error(where + "field 'intrinsic' must name an llvm.amdgcn.* intrinsic, not '" + fact.intrinsic + "'");
    if (fact.processor.empty() || fact.source.empty())
      throw input_error(where + "fields 'processor' and 'source' must not be empty");
    out.push_back(std::move(fact));
  }
  return out;
}

int CrossCheck::compared() const {
  int n = 0;
  for (auto o : {FactOutcome::kAgrees, FactOutcome::kFalseOk, FactOutcome::kFalseAbsent, FactOutcome::kNoAnswer}) {
    auto it = counts.find(o);
    n += it == counts.end() ? 0 : it->second;
  }
  return n;
}

double CrossCheck::agreement() const {
  int n = compared();
  auto it = counts.find(FactOutcome::kAgrees);
  return n == 0 || it == counts.end() ? 0.0 : static_cast<double>(it->second) / n;
}

CrossCheck cross_check(const Census& census, const std::vector<TestFact>& facts, const MeasuredFacts* measured) {
  std::map<std::tuple<std::string, std::string, bool>, std::vector<const TestFact*>> grouped;
  for (const auto& f : facts) grouped[{f.intrinsic, f.target, f.lowers}].push_back(&f);
  const auto& processors = census.provenance.processors;
  CrossCheck out;
  for (const auto& [key, group] : grouped) {
    FactComparison c;
    std::tie(c.intrinsic, c.target, c.lowers) = key;
    c.facts = group;
    const std::string& processor = group.front()->processor;
    const bool featured = c.target != processor;
    std::vector<const CensusInstantiation*> insts = instantiations_for(census, c.intrinsic, c.exact);
    const Cell* own = nullptr;
    if (measured && (!c.exact || featured)) {
      auto m = measured->find(c.intrinsic);
      if (m != measured->end()) {
        auto t = m->second.find(c.target);
        if (t != m->second.end()) own = &t->second;
      }
    }
    if (std::find(processors.begin(), processors.end(), processor) == processors.end()) {
      c.outcome = FactOutcome::kUnknownProcessor;
    } else if (census.provenance.processor_notes.count(processor)) {
      c.outcome = FactOutcome::kProcessorDefect;
      c.census_answer = census.provenance.processor_notes.at(processor);
    } else if (featured && !own) {
      // The census's cells are the plain processor's: they do not answer for a target built with other features.
      c.outcome = FactOutcome::kOtherFeatures;
    } else if (own) {
      c.exact = true;
      c.measured = true;
      c.census_key = own->intrinsic + " (measured from the test's declaration)";
      c.census_answer = answer_text(*own);
      bool ok = own->status == Status::kOk, absent = own->status == Status::kArchAbsent;
      if (c.lowers) c.outcome = ok ? FactOutcome::kAgrees : absent ? FactOutcome::kFalseAbsent : FactOutcome::kNoAnswer;
      else c.outcome = absent ? FactOutcome::kAgrees : ok ? FactOutcome::kFalseOk : FactOutcome::kNoAnswer;
    } else if (insts.empty()) {
      c.outcome = FactOutcome::kNotInCensus;
    } else {
      bool any_ok = false, all_absent = true;
      std::vector<std::string> keys, answers;
      for (const CensusInstantiation* i : insts) {
        keys.push_back(i->key);
        const Cell* cell = census.find(i->key, processor);
        if (!cell) {
          all_absent = false;
          continue;
        }
        answers.push_back((insts.size() > 1 ? i->key + ": " : "") + answer_text(*cell));
        any_ok |= cell->status == Status::kOk;
        all_absent &= cell->status == Status::kArchAbsent;
      }
      c.census_key = join(keys, ", ");
      c.census_answer = join(answers, "; ");
      if (c.lowers) {
        c.outcome = any_ok ? FactOutcome::kAgrees : all_absent ? FactOutcome::kFalseAbsent : FactOutcome::kNoAnswer;
      } else {
        c.outcome = all_absent ? FactOutcome::kAgrees : any_ok ? FactOutcome::kFalseOk : FactOutcome::kNoAnswer;
      }
    }
    ++out.counts[c.outcome];
    out.comparisons.push_back(std::move(c));
  }
  return out;
}

}  // namespace archdb
