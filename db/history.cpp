// db/history.cpp — see history.h.
#include "db/history.h"

#include "schema/targets.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace archdb {
namespace {

enum class Kind { kOk, kNo, kUnknown };

Kind kind_of(const Cell* c) {
  if (!c) return Kind::kUnknown;
  if (c->status == Status::kOk) return Kind::kOk;
  return is_answer(c->status) ? Kind::kNo : Kind::kUnknown;
}

std::string reason(const Cell* c) { return c ? std::string(status_name(c->status)) : "not measured"; }

int major_of(const std::string& flavor) {
  size_t colon = flavor.rfind(':');
  std::string f = colon == std::string::npos ? flavor : flavor.substr(colon + 1);
  return f.size() > 4 ? std::atoi(f.c_str() + 4) : 0;
}

}  // namespace

bool flavor_before(const std::string& a, const std::string& b) {
  bool ia = a.find(':') != std::string::npos, ib = b.find(':') != std::string::npos;
  if (ia != ib) return !ia;
  if (major_of(a) != major_of(b)) return major_of(a) < major_of(b);
  return a < b;
}

std::string history_summary(const std::vector<FlavorCell>& cells) {
  // Statements over measured flavors in order: runs of the same kind, where a run of unknowns between two
  // runs of the same answer joins them ("ok in every measured column (llvm19 to llvm21) (llvm20: not measured)").
  struct Statement {
    Kind kind;
    std::string first, last;
    std::vector<std::string> reasons, gaps;
  };
  auto add_reason = [](std::vector<std::string>& v, const std::string& r) {
    if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
  };
  std::vector<Statement> runs;
  for (const auto& fc : cells) {
    if (fc.imported) continue;
    Kind k = kind_of(fc.cell);
    if (runs.empty() || runs.back().kind != k) runs.push_back({k, fc.flavor, fc.flavor, {}, {}});
    runs.back().last = fc.flavor;
    add_reason(runs.back().reasons, reason(fc.cell));
  }
  if (runs.empty()) return "no columns";
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  auto span = [](const Statement& r) { return r.first == r.last ? r.first : r.first + " to " + r.last; };
  std::vector<Statement> statements;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Statement& r = runs[i];
    bool joins = r.kind == Kind::kUnknown && !statements.empty() && statements.back().kind != Kind::kUnknown &&
                 i + 1 < runs.size() && runs[i + 1].kind == statements.back().kind;
    if (!joins) {
      statements.push_back(r);
      continue;
    }
    Statement& s = statements.back();
    s.gaps.push_back(span(r) + ": " + join(r.reasons));
    s.last = runs[i + 1].last;
    for (const auto& x : runs[i + 1].reasons) add_reason(s.reasons, x);
    ++i;
  }
  std::string out;
  Kind last_answer = Kind::kUnknown;
  for (size_t i = 0; i < statements.size(); ++i) {
    const Statement& st = statements[i];
    std::string part;
    switch (st.kind) {
      case Kind::kUnknown:
        if (i == 0) part = i + 1 == statements.size() ? "unknown" : "unknown before " + statements[i + 1].first;
        else part = "unknown in " + span(st);
        part += " (" + join(st.reasons) + ")";
        break;
      // From the oldest column measured, "since" would claim what was never measured: the range says it.
      case Kind::kOk:
        if (i > 0) part = "ok since " + st.first;
        else if (statements.size() == 1) part = "ok in every measured column (" + span(st) + ")";
        else part = "ok in " + span(st);
        break;
      case Kind::kNo:
        part = (last_answer == Kind::kOk ? "removed in " + st.first : "not lowered in " + span(st)) + " (" +
               join(st.reasons) + ")";
        break;
    }
    for (const auto& g : st.gaps) part += " (" + g + ")";
    if (st.kind != Kind::kUnknown) last_answer = st.kind;
    out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

const std::vector<std::string>& change_groups() {
  static const std::vector<std::string> kGroups = {
      "became ok",    "became absent",   "name appeared",   "name vanished",    "crash appeared",
      "crash fixed",  "target appeared", "target vanished", "lowering changed", "lowering churn", "other"};
  return kGroups;
}

bool is_change_group(const std::string& name) {
  return std::find(change_groups().begin(), change_groups().end(), name) != change_groups().end();
}

std::string unknown_change_group(const std::string& name) {
  std::string all;
  for (const std::string& g : change_groups()) all += (all.empty() ? "" : ", ") + g;
  return "unknown group '" + name + "' (groups: " + all + ")";
}

std::string change_group(const Cell& from, const Cell& to) {
  if (from.status == to.status) {
    if (from.status != Status::kOk || (from.lowered_to == to.lowered_to && from.posed == to.posed)) return "";
    // The call's own instructions, without the plumbing around it (waits, nops, moves) that codegen reshuffles.
    auto own = [](const std::vector<std::string>& lowered) {
      std::set<std::string> out;
      for (const std::string& m : lowered)
        if (!is_plumbing_mnemonic(m)) out.insert(m);
      return out;
    };
    return from.posed == to.posed && own(from.lowered_to) == own(to.lowered_to) ? "lowering churn" : "lowering changed";
  }
  if (from.status == Status::kTargetUnsupported) return "target appeared";
  if (to.status == Status::kTargetUnsupported) return "target vanished";
  if (from.status == Status::kNameAbsent) return "name appeared";
  if (to.status == Status::kNameAbsent) return "name vanished";
  if (is_toolchain_failure(to.status)) return "crash appeared";
  if (is_toolchain_failure(from.status)) return "crash fixed";
  if (to.status == Status::kOk) return "became ok";
  if (from.status == Status::kOk) return "became absent";
  return "other";
}

nlohmann::ordered_json history_targets_json(const std::vector<std::string>& targets, const HistoryRowFor& row_for,
                                            bool instantiation) {
  nlohmann::ordered_json ts = nlohmann::ordered_json::object();
  for (const auto& t : targets) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    auto row = row_for(t);
    for (const auto& fc : row) {
      nlohmann::ordered_json c = fc.cell ? nlohmann::ordered_json(cell_to_json(*fc.cell)) : nlohmann::ordered_json(nullptr);
      if (fc.cell && instantiation) c["instantiation"] = fc.cell->key;
      per[fc.flavor] = c;
    }
    ts[t] = {{"summary", history_summary(row)}, {"cells", per}};
  }
  return ts;
}

IntrinsicHistory intrinsic_history(const std::string& name, const std::vector<CensusOfIntrinsic>& censuses,
                                   const std::vector<std::string>& only_targets) {
  IntrinsicHistory h;
  h.name = full_intrinsic_name(name);
  std::vector<const CensusOfIntrinsic*> order;
  for (const auto& c : censuses)
    if (!c.instantiations.empty()) order.push_back(&c);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return flavor_before(a->flavor, b->flavor); });
  std::set<std::string> answered;
  for (const CensusOfIntrinsic* c : order) {
    h.flavors.push_back(c->flavor);
    for (const auto& i : c->instantiations) h.instantiations[c->flavor].push_back(i.key);
    for (auto& [t, a] : intrinsic_answers(c->instantiations, c->cells, only_targets)) {
      h.answers[{c->flavor, t}] = std::move(a);
      answered.insert(t);
    }
  }
  h.processors.assign(answered.begin(), answered.end());
  return h;
}

std::vector<FlavorCell> IntrinsicHistory::row(const std::string& processor) const {
  std::vector<FlavorCell> row;
  for (const std::string& f : flavors) {
    auto a = answers.find({f, processor});
    row.push_back({f, false, a == answers.end() ? nullptr : &a->second});
  }
  return row;
}

nlohmann::ordered_json IntrinsicHistory::to_json() const {
  nlohmann::ordered_json out;
  out["key"] = name;
  out["source"] = "census";
  nlohmann::ordered_json fl = nlohmann::ordered_json::array();
  for (const std::string& f : flavors)
    fl.push_back({{"name", f}, {"origin", "census"}, {"instantiations", instantiations.at(f)}});
  out["flavors"] = fl;
  out["targets"] = history_targets_json(processors, [this](const std::string& t) { return row(t); }, true);
  return out;
}

bool diff_keeps_target(const std::vector<std::string>& targets, const std::string& target) {
  if (targets.empty()) return true;
  for (const std::string& t : targets)
    if (t == target || t == target_processor(target)) return true;
  return false;
}

}  // namespace archdb
