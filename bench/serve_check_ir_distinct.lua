-- bench/serve_check_ir_distinct.lua — a wrk script for tools/bench-serve: POST /v1/check with a small kernel's
-- LLVM IR that differs in every request (a comment line with a counter), so no request is answered from the
-- cache of readings: each is read by LLVM in a warm reader child.
wrk.method = "POST"
wrk.headers["Content-Type"] = "text/x-llvm-ir"
local kernel = table.concat({
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
}, "\n")
-- Each wrk thread numbers its requests apart from the others (setup runs once per thread, in the main state).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, "; request " .. counter .. " of thread " .. tostring(id) .. "\n" .. kernel)
end
