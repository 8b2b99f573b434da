; intrinsics of other targets, and an old spelling LLVM upgrades
source_filename = "ported.ll"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.x86.sse2.pause()
declare void @llvm.memset.p1.i64(ptr addrspace(1), i8, i64, i1 immarg)

define amdgpu_kernel void @ported(ptr addrspace(1) %out) {
  %a = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.amdgcn.workitem.id.x()
  call void @llvm.x86.sse2.pause()
  call void @llvm.memset.p1.i64(ptr addrspace(1) %out, i8 0, i64 4, i1 false)
  %s = add i32 %a, %b
  store i32 %s, ptr addrspace(1) %out
  ret void
}
