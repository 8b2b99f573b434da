// kernels/wgrad_reduce_kernel.h — wgrad_reduce_z, the second launch of a split reduction (target_blocks > 1):
// dW[e] = the sum of the target_blocks partials of the workspace, in z order (reduce_output). Included by
// each kernel source, so every variant's code object carries it. Device code only.
#pragma once

#include "hip_shim.h"
#include "wgrad_mapping.h"

extern "C" __global__ WGRAD_LAUNCH_BOUNDS(256) void wgrad_reduce_z(const float* workspace, float* out, int elems,
                                                                   int parts) {
  const int e = archdb::kernels::device::block_x() * archdb::kernels::kReduceThreads +
                archdb::kernels::device::thread_x();
  if (e < elems) out[e] = archdb::kernels::reduce_output(workspace, elems, parts, e);
}
