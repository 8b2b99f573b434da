-- bench/serve_cells.lua — a wrk script for tools/bench-serve: GET one cell after another, cycling through every
-- (key, target) of a flavor (the paths file, one path a line, is the script's argument), so no two requests in a
-- row ask for the same cell: with the server's answer cache off, every answer is looked up and rendered.
local paths = {}
local next_path = 1

function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  if #paths == 0 then error("serve_cells.lua: no paths in " .. args[1]) end
  next_path = math.random(#paths)  -- each thread starts elsewhere in the list
end

function request()
  local path = paths[next_path]
  next_path = next_path % #paths + 1
  return wrk.format("GET", path)
end
