// kernels/wgrad_check.h — when a computed weight gradient agrees with the double-precision reference.
//
// The tolerance, per weight e (a rigorous bound, not a statistical one):
//   |got_e - ref_e| <= (gamma32(L) + gamma64(terms)) * sum_e |dY * X|,   gamma_b(n) = n*u / (1 - n*u), u = 2^-b
// with L = terms + target_blocks and terms = N*Ho*Wo, the number of products summed into one weight.
// Why: the inputs are rounded to f16/bf16 first and the reference uses those same rounded values, so the only
// differences are the kernels' f32 arithmetic and the reference's own double rounding. Every product of two
// f16 (11 significant bits) or bf16 (8 bits) values is exact in f32, so the kernels' only errors are the f32
// additions: a weight is summed as a chain (MFMA steps in order within a reduction slice, then the slices in
// z order), and each term passes through at most L roundings of relative size <= u = 2^-24; the classical
// bound for any summation of depth L is gamma(L) * sum |terms| (Higham, Accuracy and Stability of Numerical
// Algorithms, ch. 4). The portable kernels' fma chain obeys the same bound. Any other order or a wider internal
// sum in the MFMA hardware is also a summation of depth <= L. The reference adds gamma64(terms) * sum|terms|.
// A weight whose terms are all zero must come out exactly zero.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/wgrad_problem.h"
#include "kernels/wgrad_reference.h"

namespace archdb::kernels {

double wgrad_tolerance(const WgradProblem& p, double abs_sum);

struct WgradCheck {
  int64_t weights = 0;
  int64_t failures = 0;        // weights outside their tolerance (or not finite)
  double max_abs_err = 0;      // max |got - ref|
  double max_abs_ref = 0;      // max |ref|
  double max_rel_err = 0;      // normwise: max_abs_err / max_abs_ref
  double max_tolerance = 0;    // the largest per-weight tolerance
  double worst_ratio = 0;      // max |got - ref| / tolerance (<= 1 passes; 0/0 counts 0)
  int64_t worst_index = -1;    // the weight with the worst ratio
  bool pass() const { return failures == 0; }
};

// `got` must have p.dw_elems() values.
WgradCheck check_wgrad(const WgradProblem& p, const std::vector<float>& got, const WgradReference& ref);

}  // namespace archdb::kernels
