-- bench/serve_check_keys.lua — a wrk script for tools/bench-serve: POST /v1/check with three catalog keys for
-- one target (what a build farm's gate asks).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"flavor": "llvm22", "target": "gfx942", ' ..
           '"keys": ["mfma.f32.4x4x4bf16.1k", "mfma.f32.16x16x16f16", "wmma.f32.16x16x16.f16"]}'
