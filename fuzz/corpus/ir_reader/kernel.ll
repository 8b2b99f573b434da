; a small kernel: target intrinsics, a generic one, a store
source_filename = "kernel.ll"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare float @llvm.fmuladd.f32(float, float, float)
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  call void @llvm.amdgcn.s.barrier()
  %f = call float @llvm.fmuladd.f32(float 1.0, float 2.0, float 3.0)
  store float %f, ptr addrspace(1) %out
  ret void
}
