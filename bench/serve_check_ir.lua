-- bench/serve_check_ir.lua — a wrk script for tools/bench-serve: POST /v1/check with a small kernel's LLVM IR
-- (bench/serve_kernel_ir.lua), the same kernel every request: after the first, answered from the service's cache
-- of readings.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local ir = (dofile("bench/serve_kernel_ir.lua"):gsub("\n", "\\n"))
wrk.body = '{"flavor": "llvm22", "targets": ["gfx90a", "gfx942", "gfx1201"], "ir": "' .. ir .. '"}'
