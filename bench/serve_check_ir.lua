-- bench/serve_check_ir.lua — a wrk script for tools/bench-serve: POST /v1/check with a small kernel's LLVM IR
-- (read by LLVM on every request: the costly kind of check).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local ir = table.concat({
  "declare <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32, i32, i32)",
  "declare void @llvm.amdgcn.s.barrier()",
  "declare i32 @llvm.amdgcn.workitem.id.x()",
  "define amdgpu_kernel void @wgrad(ptr addrspace(1) %out, <4 x i16> %a, <4 x i16> %b) {",
  "  %id = call i32 @llvm.amdgcn.workitem.id.x()",
  "  %acc = call <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16> %a, <4 x i16> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)",
  "  call void @llvm.amdgcn.s.barrier()",
  "  %p = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %id",
  "  store <4 x float> %acc, ptr addrspace(1) %p",
  "  ret void",
  "}",
}, "\\n")
wrk.body = '{"flavor": "llvm22", "targets": ["gfx90a", "gfx942", "gfx1201"], "ir": "' .. ir .. '"}'
