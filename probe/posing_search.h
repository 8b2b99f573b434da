// probe/posing_search.h — the other posings of one (key, target) whose default posing did not answer cleanly
// (docs/measuring.md "How the probe measures", Posings). Each search is a strategy: which posings it tries, in what order,
// and which trial decides it. Pure logic over typed trials, without LLVM and without processes
// (tests/posing_search_test.cpp); probe.cpp compiles what a search proposes, one posing a round.
//
// Invariants: a search never proposes a posing whose kernel it proposed before (posing_signature); once decided
// it proposes nothing more; every posing it proposed and was judged on is in tried(), in order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "probe/outcome.h"
#include "probe/synth.h"

namespace archdb {

// What one posing's kernel came to, as a search judges it.
struct Trial {
  Outcome outcome;
  bool instruction = false;  // ok, and the call became an instruction its baseline does not have
  bool assembled = false;    // ok, and LLVM's assembler accepted the kernel's assembly
};

class PosingSearch {
 public:
  enum class Why {
    kRefused,           // the default posing was refused
    kNoInstruction,     // it lowered to no instruction
    kRejectedAssembly,  // LLVM's assembler rejected what it became (for other than the processor lacking it)
    kCrashed,           // LLVM crashed selecting it (after its retry)
  };
  // A proposal: the posing and its place in the search's order (which names its kernel).
  struct Proposal {
    Posing posing;
    size_t index = 0;
  };

  virtual ~PosingSearch() = default;
  Why why() const { return why_; }
  // The next posing to try; nullopt once the search is over (decided, or nothing left to try).
  std::optional<Proposal> next();
  // Judges the posing next() proposed last by what its kernel came to.
  void judge(const Trial& trial);
  // A trial LLVM hung on decides a lowering search: it is retried first, as every non-answer is.
  bool retries_hangs() const { return why_ != Why::kRefused; }
  bool decided() const { return decided_; }
  const std::optional<Posing>& solution() const { return solution_; }
  const std::vector<Posing>& tried() const { return tried_; }
  // The first posing LLVM crashed on and its place (a lowering search that finds nothing answers with it).
  const std::optional<Proposal>& first_crash() const { return first_crash_; }

 protected:
  // Groups of posings: >= 0 one immarg operand; kDerivedGroup and up, the posings derived from one that changed
  // the refusal. A closed group's posings are skipped.
  static constexpr int kSweepGroup = -1, kUniformGroup = -2, kResultGroup = -3, kDerivedGroup = 1000;

  PosingSearch(Why why, const ProbeShape& shape, const Posing& default_posing);
  // Whether `trial` decides the search; may close groups or queue derived posings.
  virtual bool decides(int group, const Posing& posing, const Trial& trial) = 0;

  // Each integer immarg operand still at the default's value, set alone to each of its values (operand_values);
  // `group` < 0: one group per operand.
  std::vector<std::pair<int, Posing>> operand_posings(const Posing& base, int group = -1) const;
  void add_sweep(const std::vector<int64_t>& sweep);

  const Why why_;
  const ProbeShape& shape_;
  const Posing default_;
  std::vector<std::pair<int, Posing>> queue_;  // (group, posing), in order
  size_t next_ = 0;
  std::set<int> closed_;
  std::string default_refusal_;  // the default's refusal_key (kRefused, kCrashed)

 private:
  std::set<std::string> proposed_;  // signatures of the posings proposed (or the default's)
  bool pending_ = false;            // next() proposed queue_[next_] and judge() has not seen it yet
  bool decided_ = false;
  std::optional<Posing> solution_;
  std::vector<Posing> tried_;
  std::optional<Proposal> first_crash_;
};

// The posing the default posing was refused with (`refusal`): the immarg sweep, every immediate alike, stopping
// at a refusal that does not change; unless the refusal is about the intrinsic itself, also uniform operands,
// the result unused, and each immediate alone (and again from one that changed the refusal). Decided by a
// posing that lowers.
std::unique_ptr<PosingSearch> refusal_search(const ProbeShape& shape, const Posing& default_posing,
                                             const Outcome& refusal, const std::vector<int64_t>& sweep);
// The default posing lowered to no instruction, or to what the assembler rejected, or LLVM crashed selecting it
// (`crash`): each immediate alone, then the sweep. Decided by a posing that becomes an instruction (that the
// assembler accepts), one that is refused as the intrinsic itself while asking the least work, or one LLVM hangs on.
std::unique_ptr<PosingSearch> lowering_search(PosingSearch::Why why, const ProbeShape& shape, const Posing& default_posing,
                                              const std::vector<int64_t>& sweep, const Outcome* crash = nullptr);

}  // namespace archdb
