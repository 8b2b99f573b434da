// kernels/wgrad_emulate.cpp — see wgrad_emulate.h. HostWave is the CPU executor of mfma_wave_program: it runs
// each step for all 64 lanes before the next, which is what the barriers and the wave-wide MFMA guarantee on
// the device.
#include "kernels/wgrad_emulate.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/mfma_model.h"
#include "kernels/wgrad_program.h"
#include "support/error.h"

namespace archdb::kernels {
namespace {

struct HostWave {
  using Frag = LaneHalves4;
  using Acc = LaneAcc;

  std::vector<uint16_t> tile_a, tile_b;
  uint16_t* lds_a;
  uint16_t* lds_b;
  MfmaOp op;
  EmulationFault fault;

  HostWave(int a_elems, int b_elems, MfmaOp op, EmulationFault fault)
      : tile_a(a_elems, 0xdeadu), tile_b(b_elems, 0xdeadu), lds_a(tile_a.data()), lds_b(tile_b.data()), op(op),
        fault(fault) {}

  void barrier() {}

  template <class F>
  void each_lane(F f) {
    for (int lane = 0; lane < kWave; ++lane) f(lane);
  }

  // A 64-bit LDS read: in bounds of its tile and 8-byte aligned, as ds_read_b64 and its tr16 form require.
  template <class F>
  void read_b64(Frag& r, const uint16_t* lds, F offset) {
    const size_t size = lds == lds_a ? tile_a.size() : tile_b.size();
    for (int lane = 0; lane < kWave; ++lane) {
      const int off = offset(lane);
      if (off < 0 || off % 4 != 0 || static_cast<size_t>(off) + 4 > size)
        throw internal_error("wgrad emulation: lane " + std::to_string(lane) + " reads LDS offset " +
                             std::to_string(off) + " (misaligned or outside its tile)");
      std::copy(lds + off, lds + off + 4, r[lane].begin());
    }
  }

  template <class F>
  void read_tr16(Frag& r, const uint16_t* lds, F offset) {
    Frag fetched;
    read_b64(fetched, lds, offset);
    r = fault == EmulationFault::kTr16NoTranspose ? fetched : lds_read_b64_tr_b16(fetched);
  }

  void zero(Acc& c) { c = Acc{}; }

  // The lane's four 16-bit slices k = 0..3 are v0.[15:0], v0.[31:16], v1.[15:0], v1.[31:16].
  void mfma(const Frag& a, const Frag& b, Acc& c) {
    MfmaOperands in;
    for (int lane = 0; lane < kWave; ++lane) {
      Frag::value_type bl = b[lane];
      if (fault == EmulationFault::kSwapBSlices) std::swap(bl[0], bl[1]);
      in.a[lane] = {a[lane][0] | static_cast<uint32_t>(a[lane][1]) << 16, a[lane][2] | static_cast<uint32_t>(a[lane][3]) << 16};
      in.b[lane] = {bl[0] | static_cast<uint32_t>(bl[1]) << 16, bl[2] | static_cast<uint32_t>(bl[3]) << 16};
    }
    in.c = c;
    c = mfma_execute(op, in);
  }

  template <class F>
  void store(const Acc& c, F f) {
    for (int lane = 0; lane < kWave; ++lane)
      for (int reg = 0; reg < 4; ++reg) f(lane, reg, c[lane][reg]);
  }
};

template <class Map, int T, bool TR16>
void run_mfma(const WgradLaunch& l, const WgradArgs& args, MfmaOp op, EmulationFault fault) {
  for (int bz = 0; bz < l.grid.z; ++bz)
    for (int bx = 0; bx < l.grid.x; ++bx) {
      HostWave w(a_tile_elems<T>(), b_tile_elems<T>(), op, fault);
      mfma_wave_program<Map, T, T, TR16>(w, args, bx, bz);
    }
}

template <class Map, int T>
void run_mfma(const WgradLaunch& l, const WgradArgs& args, MfmaOp op, bool tr16, EmulationFault fault) {
  if (tr16) run_mfma<Map, T, true>(l, args, op, fault);
  else run_mfma<Map, T, false>(l, args, op, fault);
}

template <int DT, int CPG>
void run_portable(const WgradLaunch& l, const WgradArgs& args) {
  const int elems = out_elems(args);
  for (int bz = 0; bz < l.grid.z; ++bz)
    for (int bx = 0; bx < l.grid.x; ++bx)
      for (int t = 0; t < l.block; ++t) {
        const int e = bx * l.block + t;
        if (e < elems) args.out[out_base(args, bz) + e] = portable_output<DT, CPG>(args, e, bz);
      }
}

}  // namespace

WgradEmulation emulate_wgrad(const WgradProblem& p, const WgradVariant& v, const std::vector<uint16_t>& x,
                             const std::vector<uint16_t>& dy, EmulationFault fault) {
  WgradEmulation em;
  em.plan = plan_launch(p, v);
  if (static_cast<int64_t>(x.size()) != p.x_elems() || static_cast<int64_t>(dy.size()) != p.dy_elems())
    throw usage_error("wgrad emulation: input sizes do not match the problem");
  em.dw.assign(p.dw_elems(), 0.0f);
  std::vector<float> workspace(em.plan.workspace_floats, 0.0f);
  WgradArgs args = em.plan.args;
  args.x = x.data();
  args.dy = dy.data();
  args.out = em.plan.workspace_floats > 0 ? workspace.data() : em.dw.data();
  const MfmaOp op = p.dtype == kDTypeBF16 ? MfmaOp::kBF16x4 : MfmaOp::kF16x4;
  const bool tr16 = v.path == WgradPath::kMfmaTr16;
  const bool bf16 = p.dtype == kDTypeBF16;
  for (const WgradLaunch& l : em.plan.launches) {
    switch (l.kernel) {
      case WgradKernel::kDw1: run_mfma<DepthwiseMap, 1>(l, args, op, tr16, fault); break;
      case WgradKernel::kDw2: run_mfma<DepthwiseMap, 2>(l, args, op, tr16, fault); break;
      case WgradKernel::kDw3: run_mfma<DepthwiseMap, 3>(l, args, op, tr16, fault); break;
      case WgradKernel::kGroupedCpg4: run_mfma<GroupedMap, 1>(l, args, op, tr16, fault); break;
      case WgradKernel::kGroupedCpg8: run_mfma<GroupedMap, 2>(l, args, op, tr16, fault); break;
      case WgradKernel::kPortableDw:
        if (bf16) run_portable<kDTypeBF16, 1>(l, args);
        else run_portable<kDTypeF16, 1>(l, args);
        break;
      case WgradKernel::kPortableGrouped:
        if (bf16) run_portable<kDTypeBF16, 0>(l, args);
        else run_portable<kDTypeF16, 0>(l, args);
        break;
      case WgradKernel::kReduceZ: {
        const int elems = out_elems(args);
        const int parts = fault == EmulationFault::kSkipReduce ? 1 : args.target_blocks;
        for (int bx = 0; bx < l.grid.x; ++bx)
          for (int t = 0; t < l.block; ++t) {
            const int e = bx * l.block + t;
            if (e < elems) em.dw[e] = reduce_output(workspace.data(), elems, parts, e);
          }
        break;
      }
    }
  }
  return em;
}

}  // namespace archdb::kernels
