// tests/kernels_wgrad_test.cpp — the weight-gradient kernels on the CPU: problem and launch validation, the
// shared tile/lane mapping, and the numerics of every variant's host emulation against the double-precision
// reference over a sweep of shapes (and deliberate defects, to show these tests fail when the mapping is wrong).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernels/mfma_model.h"
#include "kernels/wgrad_check.h"
#include "kernels/wgrad_emulate.h"
#include "kernels/wgrad_problem.h"
#include "kernels/wgrad_program.h"
#include "kernels/wgrad_reference.h"
#include "support/error.h"

namespace archdb::kernels {
namespace {

WgradProblem problem(WgradKind kind, WgradDType dt, int n, int c, int h, int w, int filter, int stride, int pad,
                     int cpg, int target_blocks) {
  WgradProblem p;
  p.kind = kind;
  p.dtype = dt;
  p.n = n;
  p.c = c;
  p.h = h;
  p.w = w;
  p.filter = filter;
  p.stride = stride;
  p.pad = pad;
  p.cpg = cpg;
  p.target_blocks = target_blocks;
  return p;
}

// The one-line message validation gives, or "" when the problem is valid.
std::string rejection(const WgradProblem& p) {
  try {
    validate_problem(p);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    return e.what();
  }
  return "";
}

// ---- Problem and launch validation ----

TEST(KernelsProblem, TargetBlocksBelowOneIsRejectedNamingParameterAndValue) {
  WgradProblem p;
  p.target_blocks = 0;
  EXPECT_EQ(rejection(p), "invalid wgrad problem: target_blocks must be >= 1 (got 0)");
  p.target_blocks = -1;
  EXPECT_EQ(rejection(p), "invalid wgrad problem: target_blocks must be >= 1 (got -1)");
  p.kind = WgradKind::kGrouped;
  p.cpg = 4;
  EXPECT_EQ(rejection(p), "invalid wgrad problem: target_blocks must be >= 1 (got -1)");
  p.target_blocks = kMaxTargetBlocks + 1;
  EXPECT_EQ(rejection(p), "invalid wgrad problem: target_blocks must be <= 65535 (got 65536)");
}

TEST(KernelsProblem, EveryParameterIsChecked) {
  struct Bad {
    void (*change)(WgradProblem&);
    const char* message;
  };
  const Bad cases[] = {
      {[](WgradProblem& p) { p.n = 0; }, "n must be >= 1 (got 0)"},
      {[](WgradProblem& p) { p.c = -3; }, "c must be >= 1 (got -3)"},
      {[](WgradProblem& p) { p.h = 0; }, "h must be >= 1 (got 0)"},
      {[](WgradProblem& p) { p.w = int64_t{1} << 40; }, "w must be <= 2147483647 (got 1099511627776)"},
      {[](WgradProblem& p) { p.filter = 4; }, "filter must be odd, 3 to 11 (got 4)"},
      {[](WgradProblem& p) { p.filter = 13; }, "filter must be odd, 3 to 11 (got 13)"},
      {[](WgradProblem& p) { p.filter = 1; }, "filter must be odd, 3 to 11 (got 1)"},
      {[](WgradProblem& p) { p.stride = 3; }, "stride must be 1 or 2 (got 3)"},
      {[](WgradProblem& p) { p.stride = 0; }, "stride must be 1 or 2 (got 0)"},
      {[](WgradProblem& p) { p.pad = -1; }, "pad must be >= 0 (got -1)"},
      {[](WgradProblem& p) { p.pad = 3; }, "pad must be < filter 3 (got 3)"},
      {[](WgradProblem& p) { p.h = 2, p.pad = 0; }, "output height must be >= 1: h 2 + 2*pad 0 < filter 3"},
      {[](WgradProblem& p) { p.w = 1, p.pad = 0; }, "output width must be >= 1: w 1 + 2*pad 0 < filter 3"},
      {[](WgradProblem& p) { p.cpg = 4; }, "cpg must be 1 for depthwise (got 4)"},
      {[](WgradProblem& p) { p.kind = WgradKind::kGrouped; }, "cpg must be 4 or 8 for grouped (got 1)"},
      {[](WgradProblem& p) { p.kind = WgradKind::kGrouped, p.cpg = 16; }, "cpg must be 4 or 8 for grouped (got 16)"},
      {[](WgradProblem& p) { p.kind = WgradKind::kGrouped, p.cpg = 8, p.c = 12; }, "c must be a multiple of cpg 8 (got 12)"},
      {[](WgradProblem& p) { p.n = 1 << 20, p.c = 1 << 10; }, "x has more than 2147483647 elements (n*c*h*w)"},
  };
  for (const Bad& bad : cases) {
    WgradProblem p;  // depthwise f16 N=1 C=16 16x16 filter 3 pad 1: valid
    bad.change(p);
    EXPECT_EQ(rejection(p), std::string("invalid wgrad problem: ") + bad.message);
  }
}

TEST(KernelsProblem, TheDocumentedRangeIsAccepted) {
  for (WgradKind kind : {WgradKind::kDepthwise, WgradKind::kGrouped})
    for (int filter = 3; filter <= 11; filter += 2)
      for (int stride = 1; stride <= 2; ++stride)
        for (int pad = 0; pad < filter; ++pad) {
          const int cpg = kind == WgradKind::kGrouped ? 8 : 1;
          const WgradProblem p = problem(kind, kDTypeBF16, 2, 16, 11, 11, filter, stride, pad, cpg, 3);
          EXPECT_EQ(rejection(p), "") << p.describe();
          EXPECT_GE(p.ho(), 1);
        }
  // The smallest output: one row, one column.
  const WgradProblem p = problem(WgradKind::kDepthwise, kDTypeF16, 1, 1, 1, 1, 3, 2, 1, 1, 1);
  EXPECT_EQ(rejection(p), "");
  EXPECT_EQ(p.ho(), 1);
  EXPECT_EQ(p.wo(), 1);
}

TEST(KernelsProblem, PlansNameTheCompiledKernels) {
  // Depthwise: 3 -> t1, 5 and 7 -> t2, 9 and 11 -> t3; one wave per 16 channels; LDS as the compiler reports.
  for (int filter : {3, 5, 7, 9, 11}) {
    const WgradProblem p = problem(WgradKind::kDepthwise, kDTypeF16, 2, 33, 20, 20, filter, 1, 1, 1, 1);
    const WgradPlan plan = plan_launch(p, default_variant(p.kind, p.dtype));
    ASSERT_EQ(plan.launches.size(), 1u);
    const int tiles = (filter + 3) / 4;
    EXPECT_EQ(plan.launches[0].symbol, "wgrad_dw_t" + std::to_string(tiles));
    EXPECT_EQ(plan.launches[0].grid.x, 3);
    EXPECT_EQ(plan.launches[0].grid.z, 1);
    EXPECT_EQ(plan.launches[0].block, 64);
    EXPECT_EQ(plan.launches[0].lds_bytes, 4096 * tiles);  // .group_segment_fixed_size of wgrad_dw_t<tiles>
    EXPECT_EQ(plan.workspace_floats, 0);
  }
  // Grouped, split reduction: main kernel over (group, tap) pairs, then wgrad_reduce_z.
  WgradProblem g = problem(WgradKind::kGrouped, kDTypeBF16, 1, 24, 9, 9, 5, 2, 2, 8, 4);
  WgradPlan plan = plan_launch(g, *find_variant("wgrad_grouped_mfma_tr16_bf16"));
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].symbol, "wgrad_grouped_cpg8");
  EXPECT_EQ(plan.launches[0].grid.x, (3 * 25 + 15) / 16);
  EXPECT_EQ(plan.launches[0].grid.z, 4);
  EXPECT_EQ(plan.launches[0].lds_bytes, 8192);
  EXPECT_EQ(plan.launches[1].symbol, "wgrad_reduce_z");
  EXPECT_EQ(plan.launches[1].grid.x, (24 * 8 * 25 + 255) / 256);
  EXPECT_EQ(plan.workspace_floats, 4 * 24 * 8 * 25);
  // Portable: one work-item per weight.
  g.cpg = 4;
  plan = plan_launch(g, *find_variant("wgrad_grouped_portable_bf16"));
  EXPECT_EQ(plan.launches[0].symbol, "wgrad_portable_grouped");
  EXPECT_EQ(plan.launches[0].block, 256);
  EXPECT_EQ(plan.launches[0].grid.x, (24 * 4 * 25 + 255) / 256);
  EXPECT_EQ(plan.launches[0].lds_bytes, 0);
}

TEST(KernelsProblem, AVariantServesOnlyItsKindAndDtype) {
  const WgradProblem p = problem(WgradKind::kGrouped, kDTypeBF16, 1, 8, 8, 8, 3, 1, 1, 4, 1);
  try {
    plan_launch(p, *find_variant("wgrad_dw_mfma_f16"));
    FAIL() << "planned a depthwise f16 variant for a grouped bf16 problem";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_STREQ(e.what(), "variant wgrad_dw_mfma_f16 serves depthwise f16 problems, not grouped bf16");
  }
  EXPECT_NO_THROW(plan_launch(p, *find_variant("wgrad_grouped_mfma_bf16")));
}

TEST(KernelsProblem, InvalidProblemsAreNeverEmulated) {
  WgradProblem p = problem(WgradKind::kDepthwise, kDTypeF16, 1, 4, 6, 6, 3, 1, 1, 1, 1);
  const auto x = random_inputs(p.dtype, p.x_elems(), 1), dy = random_inputs(p.dtype, p.dy_elems(), 2);
  for (int64_t t : {0, -1}) {
    p.target_blocks = t;
    try {
      emulate_wgrad(p, default_variant(p.kind, p.dtype), x, dy);
      FAIL() << "emulated target_blocks " << t;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kExitUsage);
      EXPECT_NE(std::string(e.what()).find("target_blocks must be >= 1 (got " + std::to_string(t) + ")"),
                std::string::npos);
    }
  }
}

// ---- The shared mapping ----

template <int T>
void check_lds_layouts() {
  std::set<int> seen;
  for (int b = 0; b < kMfmaBlocks; ++b)
    for (int m = 0; m < 4 * T; ++m)
      for (int kk = 0; kk < kTileK; ++kk) {
        const int off = a_lds_offset<T>(b, m, kk);
        int b2, m2, k2;
        a_lds_slot<T>(off, b2, m2, k2);
        EXPECT_EQ(std::make_tuple(b2, m2, k2), std::make_tuple(b, m, kk));
        seen.insert(off);
      }
  EXPECT_EQ(static_cast<int>(seen.size()), a_tile_elems<T>());
  EXPECT_EQ(*seen.rbegin(), a_tile_elems<T>() - 1);
  for (bool tr16 : {false, true}) {
    std::set<int> b_seen;
    for (int b = 0; b < kMfmaBlocks; ++b)
      for (int nn = 0; nn < 4 * T; ++nn)
        for (int kk = 0; kk < kTileK; ++kk) {
          const int off = tr16 ? b_lds_offset<T, true>(b, nn, kk) : b_lds_offset<T, false>(b, nn, kk);
          int b2, n2, k2;
          if (tr16) b_lds_slot<T, true>(off, b2, n2, k2);
          else b_lds_slot<T, false>(off, b2, n2, k2);
          EXPECT_EQ(std::make_tuple(b2, n2, k2), std::make_tuple(b, nn, kk));
          b_seen.insert(off);
        }
    EXPECT_EQ(static_cast<int>(b_seen.size()), b_tile_elems<T>());
    EXPECT_EQ(*b_seen.rbegin(), b_tile_elems<T>() - 1);
  }
}

TEST(KernelsMapping, LdsTileLayoutsAreBijections) {
  check_lds_layouts<1>();
  check_lds_layouts<2>();
  check_lds_layouts<3>();
}

// What a lane's reads deliver, through the instruction models: lane 4*b + t gets A_b[t][k..k+3] and
// B_b[k..k+3][t] — the MFMA layout — from the plain reads and from the transposing read alike.
template <int T>
void check_fragments() {
  auto value = [](int b, int x, int kk) { return static_cast<uint16_t>(b * 1024 + x * 64 + kk); };
  std::vector<uint16_t> a(a_tile_elems<T>()), plain(b_tile_elems<T>()), tr(b_tile_elems<T>());
  for (int b = 0; b < kMfmaBlocks; ++b)
    for (int x = 0; x < 4 * T; ++x)
      for (int kk = 0; kk < kTileK; ++kk) {
        a[a_lds_offset<T>(b, x, kk)] = value(b, x, kk);
        plain[b_lds_offset<T, false>(b, x, kk)] = value(b, x, kk);
        tr[b_lds_offset<T, true>(b, x, kk)] = value(b, x, kk);
      }
  for (int t = 0; t < T; ++t)
    for (int ks = 0; ks < kTileK / kMfmaK; ++ks) {
      LaneHalves4 fa{}, fb{}, fetched{};
      for (int lane = 0; lane < 64; ++lane)
        for (int s = 0; s < 4; ++s) {
          fa[lane][s] = a[a_read_offset<T>(lane, t, ks) + s];
          fb[lane][s] = plain[b_read_offset_plain<T>(lane, t, ks) + s];
          fetched[lane][s] = tr[b_read_offset_tr16<T>(lane, t, ks) + s];
        }
      const LaneHalves4 ft = lds_read_b64_tr_b16(fetched);
      for (int lane = 0; lane < 64; ++lane)
        for (int k = 0; k < 4; ++k) {
          const int b = lane / 4, x = 4 * t + lane % 4, kk = 4 * ks + k;
          ASSERT_EQ(fa[lane][k], value(b, x, kk)) << "A lane " << lane << " slice " << k;
          ASSERT_EQ(fb[lane][k], value(b, x, kk)) << "plain B lane " << lane << " slice " << k;
          ASSERT_EQ(ft[lane][k], value(b, x, kk)) << "tr16 B lane " << lane << " slice " << k;
        }
    }
}

TEST(KernelsMapping, LaneReadsDeliverTheMfmaOperandLayout) {
  check_fragments<1>();
  check_fragments<2>();
  check_fragments<3>();
}

// Every weight is written by exactly one (work-group, lane, register), and nothing else is written.
template <class Map, int T>
void check_outputs(const WgradProblem& p) {
  const WgradArgs a = make_args(p);
  std::vector<int> hits(out_elems(a), 0);
  for (int bx = 0; bx < Map::groups_x(a); ++bx)
    for (int mt = 0; mt < T; ++mt)
      for (int nt = 0; nt < T; ++nt)
        for (int lane = 0; lane < 64; ++lane)
          for (int reg = 0; reg < 4; ++reg) {
            const int idx = Map::out_index(a, bx, lane_block(lane), 4 * mt + reg, 4 * nt + lane_t(lane));
            if (idx < 0) continue;
            ASSERT_LT(idx, out_elems(a));
            ++hits[idx];
          }
  for (size_t e = 0; e < hits.size(); ++e) ASSERT_EQ(hits[e], 1) << p.describe() << " weight " << e;
}

TEST(KernelsMapping, EveryWeightIsStoredExactlyOnce) {
  for (int c : {1, 16, 21})
    for (int filter : {3, 5, 7, 9, 11}) {
      const WgradProblem p = problem(WgradKind::kDepthwise, kDTypeF16, 1, c, 12, 12, filter, 1, 0, 1, 1);
      if (filter == 3) check_outputs<DepthwiseMap, 1>(p);
      else if (filter <= 7) check_outputs<DepthwiseMap, 2>(p);
      else check_outputs<DepthwiseMap, 3>(p);
    }
  for (int groups : {1, 3})
    for (int filter : {3, 7}) {
      check_outputs<GroupedMap, 1>(problem(WgradKind::kGrouped, kDTypeF16, 1, 4 * groups, 9, 9, filter, 1, 1, 4, 1));
      check_outputs<GroupedMap, 2>(problem(WgradKind::kGrouped, kDTypeF16, 1, 8 * groups, 9, 9, filter, 1, 1, 8, 1));
    }
}

// ---- Numerics: every variant's emulation against the reference ----

struct Suite {
  WgradKind kind;
  WgradDType dtype;
};

void PrintTo(const Suite& s, std::ostream* os) { *os << kind_name(s.kind) << " " << dtype_name(s.dtype); }

std::string suite_name(const testing::TestParamInfo<Suite>& info) {
  return kind_name(info.param.kind) + "_" + dtype_name(info.param.dtype);
}

// The tolerance is wgrad_check.h's rigorous f32 summation bound, per weight: (gamma32(N*Ho*Wo + target_blocks)
// + gamma64(N*Ho*Wo)) * sum |dY * X|; inputs are rounded to f16/bf16 before both the emulation and the double
// reference see them, and products of such values are exact in f32, so only the f32 additions differ (see there).
//
// Every odd filter, stride 1 and 2, every padding 0..R/2; batch 1..3; channel counts that fill 16 blocks and
// ones that do not; sizes that are not multiples of the 16-wide chunks or the 4-wide tiles (and some wider
// than one chunk); target_blocks 1 and several.
std::vector<WgradProblem> sweep(WgradKind kind, WgradDType dtype) {
  std::vector<WgradProblem> out;
  int idx = 0;
  for (int filter = 3; filter <= 11; filter += 2)
    for (int stride = 1; stride <= 2; ++stride)
      for (int pad = 0; pad <= filter / 2; ++pad, ++idx) {
        const int base = std::max(1, filter - 2 * pad);  // the smallest size with an output
        const int h = base + (idx * 5) % 7;
        const int w = base + (idx * 3) % 11 + (idx % 4 == 1 ? 17 : 0);
        const int ts[] = {1, 2, 3, 7};
        const int t = ts[(idx / 2) % 4];
        if (kind == WgradKind::kDepthwise) {
          const int cs[] = {5, 16, 19, 33};
          out.push_back(problem(kind, dtype, 1 + idx % 3, cs[idx % 4], h, w, filter, stride, pad, 1, t));
        } else {
          const int cpg = idx % 2 ? 8 : 4, gs[] = {1, 3, 2, 5};
          out.push_back(problem(kind, dtype, 1 + idx % 3, cpg * gs[(idx / 3) % 4], h, w, filter, stride, pad, cpg, t));
        }
      }
  // And one larger problem per filter: several chunks along wo, several work-groups along x.
  for (int filter = 3; filter <= 11; filter += 2, ++idx) {
    const int stride = 1 + idx % 2, h = filter + 23 + idx % 3, w = filter + 29 - idx % 4;
    if (kind == WgradKind::kDepthwise)
      out.push_back(problem(kind, dtype, 2, 50, h, w, filter, stride, filter / 2, 1, 4));
    else
      out.push_back(problem(kind, dtype, 2, (idx % 2 ? 8 : 4) * 7, h, w, filter, stride, filter / 2, idx % 2 ? 8 : 4, 4));
  }
  return out;
}

class KernelsNumerics : public testing::TestWithParam<Suite> {};

TEST_P(KernelsNumerics, EveryVariantMatchesTheReference) {
  const Suite s = GetParam();
  std::vector<const WgradVariant*> variants;
  for (const auto& v : wgrad_variants())
    if (v.kind == s.kind && v.dtype == s.dtype) variants.push_back(&v);
  ASSERT_EQ(variants.size(), 3u);
  uint64_t seed = 1;
  int split = 0, partial = 0;
  for (const WgradProblem& p : sweep(s.kind, s.dtype)) {
    SCOPED_TRACE(p.describe());
    const auto x = random_inputs(p.dtype, p.x_elems(), seed++), dy = random_inputs(p.dtype, p.dy_elems(), seed++);
    const WgradReference ref = wgrad_reference(p, x, dy);
    std::vector<float> plain;
    for (const WgradVariant* v : variants) {
      const WgradEmulation em = emulate_wgrad(p, *v, x, dy);
      const WgradCheck c = check_wgrad(p, em.dw, ref);
      EXPECT_TRUE(c.pass()) << v->name << ": " << c.failures << " of " << c.weights << " weights off; worst weight "
                            << c.worst_index << " error " << std::abs(em.dw[c.worst_index] - ref.dw[c.worst_index])
                            << " > tolerance " << wgrad_tolerance(p, ref.abs_sum[c.worst_index]);
      EXPECT_GT(c.max_abs_ref, 0.0);  // not a vacuous comparison of zeros
      if (v->path == WgradPath::kMfma) plain = em.dw;
      // The tr16 data path moves the same values into the same MFMAs in the same order: the same bits.
      if (v->path == WgradPath::kMfmaTr16) {
        EXPECT_EQ(em.dw, plain) << v->name;
      }
    }
    split += p.target_blocks > 1;
    partial += s.kind == WgradKind::kDepthwise ? p.c % 16 != 0 : (p.dw_elems() / (p.cpg * p.cpg)) % 16 != 0;
  }
  EXPECT_GT(split, 10);
  EXPECT_GT(partial, 10);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelsNumerics,
                         testing::Values(Suite{WgradKind::kDepthwise, kDTypeF16}, Suite{WgradKind::kDepthwise, kDTypeBF16},
                                         Suite{WgradKind::kGrouped, kDTypeF16}, Suite{WgradKind::kGrouped, kDTypeBF16}),
                         suite_name);

TEST(KernelsWgrad, SplittingTheReductionAgreesWithOneSlice) {
  // More slices than reduction rows: the empty slices contribute zeros.
  for (int t : {1, 2, 5, 64}) {
    const WgradProblem p = problem(WgradKind::kDepthwise, kDTypeBF16, 2, 17, 5, 9, 5, 1, 2, 1, t);
    const auto x = random_inputs(p.dtype, p.x_elems(), 5), dy = random_inputs(p.dtype, p.dy_elems(), 6);
    const WgradReference ref = wgrad_reference(p, x, dy);
    for (const char* name : {"wgrad_dw_mfma_bf16", "wgrad_dw_portable_bf16"})
      EXPECT_TRUE(check_wgrad(p, emulate_wgrad(p, *find_variant(name), x, dy).dw, ref).pass()) << name << " t=" << t;
  }
}

TEST(KernelsWgrad, ToleranceIsFarBelowTheValues) {
  const WgradProblem p = problem(WgradKind::kDepthwise, kDTypeF16, 3, 16, 24, 24, 7, 1, 3, 1, 4);
  const auto x = random_inputs(p.dtype, p.x_elems(), 9), dy = random_inputs(p.dtype, p.dy_elems(), 10);
  const WgradReference ref = wgrad_reference(p, x, dy);
  const WgradCheck c = check_wgrad(p, emulate_wgrad(p, default_variant(p.kind, p.dtype), x, dy).dw, ref);
  EXPECT_TRUE(c.pass());
  EXPECT_LE(c.max_abs_err, c.max_tolerance);
  EXPECT_LT(c.max_tolerance, 0.01 * c.max_abs_ref);
  // Each weight's tolerance is below the mean size of one of its terms: a product dropped, duplicated or taken
  // from the wrong place is typically outside it (terms^2 * 2^-24 < 1 for terms < 4096).
  for (size_t e = 0; e < ref.dw.size(); ++e)
    ASSERT_LT(wgrad_tolerance(p, ref.abs_sum[e]), ref.abs_sum[e] / static_cast<double>(p.terms())) << e;
}

// The numerics tests fail when the data path is wrong.
TEST(KernelsWgrad, DeliberateDefectsAreCaught) {
  struct Defect {
    const char* variant;
    EmulationFault fault;
    WgradKind kind;
    int cpg, target_blocks;
  };
  const Defect defects[] = {
      {"wgrad_dw_mfma_f16", EmulationFault::kSwapBSlices, WgradKind::kDepthwise, 1, 1},
      {"wgrad_grouped_mfma_f16", EmulationFault::kSwapBSlices, WgradKind::kGrouped, 8, 1},
      {"wgrad_dw_mfma_tr16_f16", EmulationFault::kTr16NoTranspose, WgradKind::kDepthwise, 1, 1},
      {"wgrad_grouped_mfma_tr16_f16", EmulationFault::kTr16NoTranspose, WgradKind::kGrouped, 4, 1},
      {"wgrad_dw_portable_f16", EmulationFault::kSkipReduce, WgradKind::kDepthwise, 1, 3},
      {"wgrad_grouped_mfma_f16", EmulationFault::kSkipReduce, WgradKind::kGrouped, 4, 2},
  };
  for (const Defect& d : defects) {
    const WgradProblem p = problem(d.kind, kDTypeF16, 2, 16, 10, 11, 5, 1, 2, d.cpg, d.target_blocks);
    const auto x = random_inputs(p.dtype, p.x_elems(), 3), dy = random_inputs(p.dtype, p.dy_elems(), 4);
    const WgradReference ref = wgrad_reference(p, x, dy);
    const WgradVariant& v = *find_variant(d.variant);
    EXPECT_TRUE(check_wgrad(p, emulate_wgrad(p, v, x, dy).dw, ref).pass()) << d.variant;
    EXPECT_FALSE(check_wgrad(p, emulate_wgrad(p, v, x, dy, d.fault).dw, ref).pass())
        << d.variant << " with a deliberate defect " << static_cast<int>(d.fault) << " passed";
  }
  // One weight off by a single product's worth is caught too.
  const WgradProblem p = problem(WgradKind::kGrouped, kDTypeBF16, 1, 8, 7, 7, 3, 1, 1, 4, 1);
  const auto x = random_inputs(p.dtype, p.x_elems(), 7), dy = random_inputs(p.dtype, p.dy_elems(), 8);
  const WgradReference ref = wgrad_reference(p, x, dy);
  std::vector<float> dw = emulate_wgrad(p, default_variant(p.kind, p.dtype), x, dy).dw;
  ASSERT_TRUE(check_wgrad(p, dw, ref).pass());
  dw[37] += 1.0f / 64;
  EXPECT_FALSE(check_wgrad(p, dw, ref).pass());
}

}  // namespace
}  // namespace archdb::kernels
