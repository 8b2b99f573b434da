// kernels/hip_shim.h — the little of HIP the wgrad kernels use, written against clang's own attributes and
// AMDGPU builtins, so the kernels compile with `clang++ -x hip -nogpuinc -nogpulib` and no HIP installation.
// Device code only (included by the .hip sources). Block sizes are compile-time constants: nothing reads
// blockDim/gridDim, so no kernel needs the implicit-argument or dispatch pointer.
#pragma once

#if !defined(__HIP__)
#error "hip_shim.h is for HIP device compilation (clang++ -x hip --cuda-device-only)"
#endif

#include <stdint.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
// The flat work-group size is fixed per kernel; clang then knows the work-item id range.
#define WGRAD_LAUNCH_BOUNDS(threads) __attribute__((amdgpu_flat_work_group_size(threads, threads)))

namespace archdb::kernels::device {

__device__ inline int thread_x() { return static_cast<int>(__builtin_amdgcn_workitem_id_x()); }
__device__ inline int block_x() { return static_cast<int>(__builtin_amdgcn_workgroup_id_x()); }
__device__ inline int block_z() { return static_cast<int>(__builtin_amdgcn_workgroup_id_z()); }

// __syncthreads(): LDS writes before it are visible to every work-item of the group after it.
__device__ inline void sync_threads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

typedef short short4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef __attribute__((address_space(3))) short4_t lds_short4_t;

}  // namespace archdb::kernels::device
