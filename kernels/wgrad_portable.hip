// kernels/wgrad_portable.hip — the portable weight-gradient kernels: no MFMA, no LDS, one work-item per weight
// with an f32 fused-multiply-add loop over its reduction slice (portable_output in wgrad_mapping.h). For the
// targets the MFMA kernels cannot serve (RDNA gfx11/gfx12, gfx1250, ...), wave32 or wave64 alike.
//
// Selected by defines (one of each pair):
//   WGRAD_KIND_DEPTHWISE | WGRAD_KIND_GROUPED
//   WGRAD_DTYPE_F16      | WGRAD_DTYPE_BF16
//
// Kernels (extern "C"), 256 work-items per work-group, grid (ceil(E / 256), 1, target_blocks):
//   wgrad_portable_dw or wgrad_portable_grouped; wgrad_reduce_z (x = ceil(E / 256)) when target_blocks > 1.
// Build: clang++ -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 -std=c++17
//        --offload-arch=gfx1201 -D... wgrad_portable.hip -o wgrad.hsaco
#include "hip_shim.h"
#include "wgrad_reduce_kernel.h"
#include "wgrad_mapping.h"

#if defined(WGRAD_KIND_DEPTHWISE) == defined(WGRAD_KIND_GROUPED)
#error "define exactly one of WGRAD_KIND_DEPTHWISE, WGRAD_KIND_GROUPED"
#endif
#if defined(WGRAD_DTYPE_F16) == defined(WGRAD_DTYPE_BF16)
#error "define exactly one of WGRAD_DTYPE_F16, WGRAD_DTYPE_BF16"
#endif
#if defined(WGRAD_DTYPE_F16)
constexpr int kDType = archdb::kernels::kDTypeF16;
#else
constexpr int kDType = archdb::kernels::kDTypeBF16;
#endif

using archdb::kernels::WgradArgs;
namespace dev = archdb::kernels::device;
namespace k = archdb::kernels;

template <int CPG>
__device__ void run_portable(const WgradArgs& args) {
  const int e = dev::block_x() * k::kPortableThreads + dev::thread_x();
  if (e >= k::out_elems(args)) return;
  const int z = dev::block_z();
  args.out[k::out_base(args, z) + e] = k::portable_output<kDType, CPG>(args, e, z);
}

#if defined(WGRAD_KIND_DEPTHWISE)
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(256) void wgrad_portable_dw(WgradArgs args) { run_portable<1>(args); }
#else
extern "C" __global__ WGRAD_LAUNCH_BOUNDS(256) void wgrad_portable_grouped(WgradArgs args) { run_portable<0>(args); }
#endif
