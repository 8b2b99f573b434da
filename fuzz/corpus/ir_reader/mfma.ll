; an MFMA kernel, and an intrinsic declared but never called
source_filename = "mfma.ll"
declare <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.fmuladd.f32(float, float, float)
declare void @llvm.amdgcn.s.sleep(i32 immarg)

define amdgpu_kernel void @wgrad_dw7x7_bf16(ptr addrspace(1) %out, <4 x i16> %a, <4 x i16> %b) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %f = sitofp i32 %id to float
  %g = call float @llvm.fmuladd.f32(float %f, float %f, float %f)
  %c = insertelement <4 x float> zeroinitializer, float %g, i32 0
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16> %a, <4 x i16> %b, <4 x float> %c, i32 0, i32 0, i32 0)
  store <4 x float> %d, ptr addrspace(1) %out
  ret void
}
