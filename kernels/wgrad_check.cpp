// kernels/wgrad_check.cpp — see wgrad_check.h.
#include "kernels/wgrad_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/error.h"

namespace archdb::kernels {

namespace {
double gamma(double n, double u) { return n * u / (1.0 - n * u); }
}  // namespace

double wgrad_tolerance(const WgradProblem& p, double abs_sum) {
  const double terms = static_cast<double>(p.terms());
  const double depth = terms + static_cast<double>(p.target_blocks);
  return (gamma(depth, 0x1p-24) + gamma(terms, 0x1p-53)) * abs_sum;
}

WgradCheck check_wgrad(const WgradProblem& p, const std::vector<float>& got, const WgradReference& ref) {
  if (got.size() != ref.dw.size() || ref.abs_sum.size() != ref.dw.size() ||
      static_cast<int64_t>(got.size()) != p.dw_elems())
    throw internal_error("wgrad check: result sizes do not match the problem");
  WgradCheck c;
  c.weights = static_cast<int64_t>(got.size());
  for (size_t e = 0; e < got.size(); ++e) {
    const double err = std::fabs(static_cast<double>(got[e]) - ref.dw[e]);
    const double tol = wgrad_tolerance(p, ref.abs_sum[e]);
    const double ratio = !std::isfinite(err) ? std::numeric_limits<double>::infinity()
                         : err == 0          ? 0.0
                         : tol > 0           ? err / tol
                                             : std::numeric_limits<double>::infinity();
    if (!(err <= tol)) ++c.failures;
    if (std::isnan(err) || (!std::isnan(c.max_abs_err) && err > c.max_abs_err)) c.max_abs_err = err;  // NaN sticks
    c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(ref.dw[e]));
    c.max_tolerance = std::max(c.max_tolerance, tol);
    if (c.worst_index < 0 || ratio > c.worst_ratio) {
      c.worst_ratio = ratio;
      c.worst_index = static_cast<int64_t>(e);
    }
  }
  c.max_rel_err = c.max_abs_ref > 0 ? c.max_abs_err / c.max_abs_ref : c.max_abs_err;
  return c;
}

}  // namespace archdb::kernels
