// kernels/wgrad_mfma.hip — the MFMA weight-gradient kernels (CDNA: gfx90a, gfx942, gfx950) on the batched
// 4x4x4 MFMA: 16 blocks of 4x4x4 per wave64 instruction, f16 or bf16 inputs, f32 accumulation. The mapping
// is wgrad_mapping.h, the program wgrad_program.h; this file binds them to the hardware.
//
// Selected by defines (one of each pair; the manifests in manifests/ name them per variant):
//   WGRAD_KIND_DEPTHWISE | WGRAD_KIND_GROUPED
//   WGRAD_DTYPE_F16      | WGRAD_DTYPE_BF16
//   WGRAD_USE_TR16       B tiles read with ds_read_b64_tr_b16 (gfx950 only); otherwise plain 64-bit LDS reads
//
// Kernels (extern "C"), one work-group = one wave of 64 work-items, grid (x, 1, target_blocks):
//   depthwise: wgrad_dw_t1 (filter 3), wgrad_dw_t2 (5, 7), wgrad_dw_t3 (9, 11)    x = ceil(C / 16)
//   grouped:   wgrad_grouped_cpg4, wgrad_grouped_cpg8                            x = ceil(G*R*S / 16)
//   both:      wgrad_reduce_z (256 work-items, x = ceil(E / 256)) when target_blocks > 1
// Build: clang++ -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 -std=c++17
//        --offload-arch=gfx90a -D... wgrad_mfma.hip -o wgrad.hsaco
#include "hip_shim.h"
#include "wgrad_reduce_kernel.h"
#include "wgrad_program.h"

#if defined(WGRAD_KIND_DEPTHWISE) == defined(WGRAD_KIND_GROUPED)
#error "define exactly one of WGRAD_KIND_DEPTHWISE, WGRAD_KIND_GROUPED"
#endif
#if defined(WGRAD_DTYPE_F16) == defined(WGRAD_DTYPE_BF16)
#error "define exactly one of WGRAD_DTYPE_F16, WGRAD_DTYPE_BF16"
#endif
#if defined(WGRAD_USE_TR16) && defined(__HIP_DEVICE_COMPILE__) && !defined(__gfx950__)
#error "WGRAD_USE_TR16 needs gfx950 (ds_read_b64_tr_b16)"
#endif
#if defined(WGRAD_USE_TR16)
constexpr bool kTr16 = true;
#else
constexpr bool kTr16 = false;
#endif

namespace archdb::kernels::device {

// One lane of a real wave, for mfma_wave_program.
struct Lane {
  using Frag = short4_t;
  using Acc = float4_t;
  int lane;
  uint16_t* lds_a;
  uint16_t* lds_b;

  __device__ void barrier() { sync_threads(); }
  template <class F>
  __device__ void each_lane(F f) { f(lane); }
  template <class F>
  __device__ void read_b64(Frag& r, const uint16_t* lds, F offset) {
    r = *reinterpret_cast<const short4_t*>(lds + offset(lane));  // ds_read_b64: offsets are multiples of 4
  }
  template <class F>
  __device__ void read_tr16(Frag& r, const uint16_t* lds, F offset) {
#if defined(WGRAD_USE_TR16)
    r = __builtin_amdgcn_ds_read_tr16_b64_v4i16((lds_short4_t*)(lds + offset(lane)));
#else
    (void)r, (void)lds, (void)offset;
#endif
  }
  __device__ void zero(Acc& c) { c = float4_t{0.0f, 0.0f, 0.0f, 0.0f}; }
  __device__ void mfma(const Frag& a, const Frag& b, Acc& c) {
#if defined(WGRAD_DTYPE_F16)
    c = __builtin_amdgcn_mfma_f32_4x4x4f16(__builtin_bit_cast(half4_t, a), __builtin_bit_cast(half4_t, b), c, 0, 0, 0);
#else
    c = __builtin_amdgcn_mfma_f32_4x4x4bf16_1k(a, b, c, 0, 0, 0);
#endif
  }
  template <class F>
  __device__ void store(const Acc& c, F f) {
    f(lane, 0, c[0]);
    f(lane, 1, c[1]);
    f(lane, 2, c[2]);
    f(lane, 3, c[3]);
  }
};

template <class Map, int MT, int NT>
__device__ void run_wave(const WgradArgs& args) {
  __shared__ __attribute__((aligned(16))) uint16_t lds_a[a_tile_elems<MT>()];
  __shared__ __attribute__((aligned(16))) uint16_t lds_b[b_tile_elems<NT>()];
  Lane w{thread_x(), lds_a, lds_b};
  mfma_wave_program<Map, MT, NT, kTr16>(w, args, block_x(), block_z());
}

}  // namespace archdb::kernels::device

using archdb::kernels::WgradArgs;
namespace dev = archdb::kernels::device;

#if defined(WGRAD_KIND_DEPTHWISE)
using WgradMap = archdb::kernels::DepthwiseMap;
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(64) void wgrad_dw_t1(WgradArgs args) { dev::run_wave<WgradMap, 1, 1>(args); }
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(64) void wgrad_dw_t2(WgradArgs args) { dev::run_wave<WgradMap, 2, 2>(args); }
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(64) void wgrad_dw_t3(WgradArgs args) { dev::run_wave<WgradMap, 3, 3>(args); }
#else
using WgradMap = archdb::kernels::GroupedMap;
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(64) void wgrad_grouped_cpg4(WgradArgs args) { dev::run_wave<WgradMap, 1, 1>(args); }
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(64) void wgrad_grouped_cpg8(WgradArgs args) { dev::run_wave<WgradMap, 2, 2>(args); }
#endif
