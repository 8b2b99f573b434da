-- bench/serve_check_cycle.lua — a wrk script for tools/bench-serve: POST /v1/check with one catalog key for one
-- target, cycling through every (key, target) of a flavor (the argument: a file of "KEY TARGET" lines).
local bodies = {}
local next_body = 1

function init(args)
  for line in io.lines(args[1]) do
    local key, target = line:match("^(%S+) (%S+)$")
    if key then
      bodies[#bodies + 1] = '{"flavor": "llvm22", "target": "' .. target .. '", "keys": ["' .. key .. '"]}'
    end
  end
  if #bodies == 0 then error("serve_check_cycle.lua: no KEY TARGET lines in " .. args[1]) end
  next_body = math.random(#bodies)
end

function request()
  local body = bodies[next_body]
  next_body = next_body % #bodies + 1
  return wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json"}, body)
end
