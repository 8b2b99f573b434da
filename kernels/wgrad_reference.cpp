// kernels/wgrad_reference.cpp — see wgrad_reference.h.
#include "kernels/wgrad_reference.h"

#include <cmath>

#include "kernels/wgrad_numeric.h"
#include "support/error.h"

namespace archdb::kernels {

WgradReference wgrad_reference(const WgradProblem& p, const std::vector<uint16_t>& x, const std::vector<uint16_t>& dy) {
  validate_problem(p);
  if (static_cast<int64_t>(x.size()) != p.x_elems() || static_cast<int64_t>(dy.size()) != p.dy_elems())
    throw usage_error("wgrad reference: input sizes do not match the problem");
  const int64_t N = p.n, C = p.c, H = p.h, W = p.w, Ho = p.ho(), Wo = p.wo(), R = p.filter, cpg = p.cpg;
  auto xv = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return static_cast<double>(decode_input(p.dtype, x[((n * C + c) * H + h) * W + w]));
  };
  auto dyv = [&](int64_t n, int64_t c, int64_t ho, int64_t wo) {
    return static_cast<double>(decode_input(p.dtype, dy[((n * C + c) * Ho + ho) * Wo + wo]));
  };
  WgradReference ref;
  ref.dw.assign(p.dw_elems(), 0.0);
  ref.abs_sum.assign(p.dw_elems(), 0.0);
  for (int64_t oc = 0; oc < C; ++oc)
    for (int64_t ci = 0; ci < cpg; ++ci) {
      const int64_t xc = (oc / cpg) * cpg + ci;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < R; ++s) {
          double sum = 0.0, abs_sum = 0.0;
          for (int64_t n = 0; n < N; ++n)
            for (int64_t ho = 0; ho < Ho; ++ho) {
              const int64_t h = ho * p.stride - p.pad + r;
              if (h < 0 || h >= H) continue;
              for (int64_t wo = 0; wo < Wo; ++wo) {
                const int64_t w = wo * p.stride - p.pad + s;
                if (w < 0 || w >= W) continue;
                const double term = dyv(n, oc, ho, wo) * xv(n, xc, h, w);
                sum += term;
                abs_sum += std::fabs(term);
              }
            }
          const int64_t e = ((oc * cpg + ci) * R + r) * R + s;
          ref.dw[e] = sum;
          ref.abs_sum[e] = abs_sum;
        }
    }
  return ref;
}

std::vector<uint16_t> random_inputs(WgradDType dtype, int64_t count, uint64_t seed) {
  // SplitMix64: a fixed generator, so the data do not depend on the standard library's distributions.
  uint64_t state = seed;
  std::vector<uint16_t> out(static_cast<size_t>(count));
  for (auto& v : out) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1p-53;  // [0, 1)
    v = encode_input(dtype, static_cast<float>(2.0 * u - 1.0));
  }
  return out;
}

}  // namespace archdb::kernels
