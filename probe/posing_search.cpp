// probe/posing_search.cpp — the posing strategies (see posing_search.h).
#include "probe/posing_search.h"

#include <algorithm>
#include <cctype>

namespace archdb {
namespace {

// Per immarg operand (integers only), the values tried alone, the others at the default: 1 (a flag, a
// one-channel mask: image dmask 0 loads nothing); for a refusal, also a count of 1 encoded in bits 24-27
// beside an index of 1 (ds.ordered.*: 0x1000001; out of most fields' range, so never used to ask a call
// that lowered for work); for a call that became nothing or crashed selection, also 32 (ICMP_EQ, the first
// integer predicate: icmp with predicate 0 or 1 folds away or crashes); for assembly the assembler
// rejected, the masks of two, three and four channels too (an image store of N texels needs N channels).
std::vector<int64_t> operand_values(const std::string& type, PosingSearch::Why why) {
  if (type == "i1") return {1};
  switch (why) {
    case PosingSearch::Why::kRefused:
      if (type == "i32" || type == "i64") return {1, 16777217};
      return {1};
    case PosingSearch::Why::kRejectedAssembly: return {1, 3, 7, 15};
    case PosingSearch::Why::kNoInstruction:
    case PosingSearch::Why::kCrashed:
      if (type == "i32") return {1, 32};
      return {1};
  }
  return {1};
}

// Asked for the least work: every immediate 0 or 1.
bool least_work(const Posing& posing) {
  return std::all_of(posing.imm.begin(), posing.imm.end(), [](int64_t x) { return x == 0 || x == 1; });
}

// The default posing was refused.
class RefusalSearch : public PosingSearch {
 public:
  static constexpr int kMaxExpansions = 2;

  RefusalSearch(const ProbeShape& shape, const Posing& default_posing, const Outcome& refusal,
                const std::vector<int64_t>& sweep)
      : PosingSearch(Why::kRefused, shape, default_posing) {
    default_refusal_ = refusal.refusal_key();
    refusals_.insert(default_refusal_);
    add_sweep(sweep);
    if (refusal.refuses_the_intrinsic()) return;
    // One kernel each, before the immediates one at a time: a register class or an atomic's returning form
    // are common objections.
    if (has_divergent_operand(shape)) {
      Posing q = default_;
      q.uniform = true;
      queue_.push_back({kUniformGroup, q});
    }
    if (shape.return_type != "void" && shape.has_side_effects) {
      Posing q = default_;
      q.result_unused = true;
      queue_.push_back({kResultGroup, q});
    }
    for (auto& q : operand_posings(default_)) queue_.push_back(std::move(q));
  }

 private:
  bool decides(int group, const Posing& posing, const Trial& trial) override {
    if (trial.outcome.status == Status::kOk) return true;
    if (trial.outcome.status != Status::kArchAbsent) return false;
    std::string refusal = trial.outcome.refusal_key();
    if (refusal == default_refusal_) {
      // The sweep stops (as ever); an operand's values are few, and one of them may encode a field the
      // others do not (ds.ordered.*: 1 and 15 are refused alike, 0x1000001 is not).
      if (group == kSweepGroup) closed_.insert(group);
    } else if (group >= 0 && expansions_ < kMaxExpansions && refusals_.insert(refusal).second) {
      // LLVM objects to something else now ("dword count must be between 1 and 4" became "wave_done
      // requires wave_release"): this immediate answered the first objection; the others are tried
      // again from it, next.
      ++expansions_;
      auto derived = operand_posings(posing, kDerivedGroup + expansions_);
      queue_.insert(queue_.begin() + static_cast<long>(next_), derived.begin(), derived.end());
    }
    return false;
  }

  std::set<std::string> refusals_;  // refusals met so far
  int expansions_ = 0;
};

// The default posing became no instruction, or what the assembler rejected, or LLVM crashed selecting it.
class LoweringSearch : public PosingSearch {
 public:
  LoweringSearch(Why why, const ProbeShape& shape, const Posing& default_posing, const std::vector<int64_t>& sweep,
                 const Outcome* crash)
      : PosingSearch(why, shape, default_posing) {
    if (crash) default_refusal_ = crash->refusal_key();
    for (auto& q : operand_posings(default_)) queue_.push_back(std::move(q));
    add_sweep(sweep);
  }

 private:
  // Asked to do some work (a channel to load), the processor refuses the intrinsic itself: it lowers only
  // as nothing, and a kernel that uses it for anything cannot be built (image samples on gfx90a). Or
  // LLVM hangs on it (retried): what a kernel that uses it meets, so the cell says that, and the search
  // spends no more budgets. A crash (also retried) is one posing's: the next may lower (an image load
  // returning its fail status crashes ISel unless texfailctrl asks for it); it is the cell only if none
  // does (probe.cpp).
  bool decides(int group, const Posing& posing, const Trial& trial) override {
    const Outcome& o = trial.outcome;
    if (o.status == Status::kToolchainTimeout) return true;
    if (o.status == Status::kArchAbsent && o.refuses_the_intrinsic()) {
      // Decides only when asked for the least work (every immediate 0 or 1): an immediate out of its
      // field's range (texfailctrl 15) is refused as "Cannot select: intrinsic" on every processor, which
      // says nothing about the processor. The sweep's larger values are refused alike: it stops.
      if (least_work(posing)) return true;
      if (group == kSweepGroup) closed_.insert(group);
      return false;
    }
    if (o.status == Status::kToolchainCrash) {
      // LLVM crashes as it did posed the default way: not about this immediate; its other values are
      // not tried (as a refusal that does not change closes the sweep).
      if (why_ == Why::kCrashed && o.refusal_key() == default_refusal_) closed_.insert(group);
      return false;
    }
    if (o.status != Status::kOk) return false;
    return why_ == Why::kRejectedAssembly ? trial.instruction && trial.assembled : trial.instruction;
  }
};

}  // namespace

PosingSearch::PosingSearch(Why why, const ProbeShape& shape, const Posing& default_posing)
    : why_(why), shape_(shape), default_(default_posing) {
  proposed_.insert(posing_signature(shape, default_posing));
}

std::optional<PosingSearch::Proposal> PosingSearch::next() {
  while (!decided_ && next_ < queue_.size()) {
    const auto& [group, posing] = queue_[next_];
    if (closed_.count(group) || !proposed_.insert(posing_signature(shape_, posing)).second) {
      ++next_;  // a closed group, or a posing that writes the same kernel again
      continue;
    }
    pending_ = true;
    return Proposal{posing, next_};
  }
  return std::nullopt;
}

void PosingSearch::judge(const Trial& trial) {
  if (!pending_) return;
  pending_ = false;
  auto [group, posing] = queue_[next_];
  ++next_;
  tried_.push_back(posing);
  if (trial.outcome.status == Status::kToolchainCrash && why_ != Why::kRefused && !first_crash_)
    first_crash_ = Proposal{posing, next_ - 1};
  if (decides(group, posing, trial)) {
    decided_ = true;
    solution_ = posing;
  }
}

std::vector<std::pair<int, Posing>> PosingSearch::operand_posings(const Posing& base, int group) const {
  std::vector<std::pair<int, Posing>> out;
  size_t immarg = 0;
  for (const auto& p : shape_.params) {
    if (!p.immarg) continue;
    bool integer = p.type.size() > 1 && p.type[0] == 'i' && std::isdigit(static_cast<unsigned char>(p.type[1]));
    if (integer && base.imm[immarg] == default_.imm[immarg])
      for (int64_t v : operand_values(p.type, why_)) {
        Posing q = base;
        q.imm[immarg] = v;
        out.push_back({group < 0 ? static_cast<int>(immarg) : group, q});
      }
    ++immarg;
  }
  return out;
}

void PosingSearch::add_sweep(const std::vector<int64_t>& sweep) {
  if (!shape_.has_int_immarg()) return;
  for (int64_t v : sweep) queue_.push_back({kSweepGroup, Posing::all(shape_, v)});
}

std::unique_ptr<PosingSearch> refusal_search(const ProbeShape& shape, const Posing& default_posing,
                                             const Outcome& refusal, const std::vector<int64_t>& sweep) {
  return std::make_unique<RefusalSearch>(shape, default_posing, refusal, sweep);
}

std::unique_ptr<PosingSearch> lowering_search(PosingSearch::Why why, const ProbeShape& shape, const Posing& default_posing,
                                              const std::vector<int64_t>& sweep, const Outcome* crash) {
  return std::make_unique<LoweringSearch>(why, shape, default_posing, sweep, crash);
}

}  // namespace archdb
