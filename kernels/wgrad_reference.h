// kernels/wgrad_reference.h — the weight gradient straight from its definition, in double precision, for
// checking the kernels' emulation. Written independently of wgrad_mapping.h: no tiles, no lanes, one loop nest.
// Host code only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/wgrad_problem.h"

namespace archdb::kernels {

struct WgradReference {
  std::vector<double> dw;       // [C][cpg][R][S]
  std::vector<double> abs_sum;  // per weight: sum of |dY * X| over its terms (the scale of its rounding error)
};

// dW[oc][ci][r][s] = sum over n, ho, wo of dY[n][oc][ho][wo] * X[n][(oc / cpg) * cpg + ci][ho*stride - pad + r]
// [wo*stride - pad + s], terms in the padding omitted; inputs are the 16-bit values of the problem's dtype,
// decoded exactly. Depthwise is cpg = 1. Validates the problem (usage_error) and the buffer sizes.
WgradReference wgrad_reference(const WgradProblem& p, const std::vector<uint16_t>& x, const std::vector<uint16_t>& dy);

// Seeded test data: `count` values uniform in [-1, 1), rounded to the dtype (same seed, same bits, everywhere).
std::vector<uint16_t> random_inputs(WgradDType dtype, int64_t count, uint64_t seed);

}  // namespace archdb::kernels
