-- bench/serve_check_ir_distinct.lua — a wrk script for tools/bench-serve: POST /v1/check with a small kernel's
-- LLVM IR (bench/serve_kernel_ir.lua) that differs in every request (a comment line with a counter), so no request is answered from the
-- cache of readings: each is read by LLVM in a warm reader child.
wrk.method = "POST"
wrk.headers["Content-Type"] = "text/x-llvm-ir"
local kernel = dofile("bench/serve_kernel_ir.lua")
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
