-- wrk script: GET /api/minions/<random id>/runs, ids read from the file given after `--`.
-- Each thread seeds its own generator from its thread number, so a run is reproducible.
local ids = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  local path = args[1] or "bench/data/fleet/minion-ids.txt"
  for line in io.lines(path) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  if #ids == 0 then error("no minion ids in " .. path) end
  math.randomseed(1000 + (tid or 1))
end

function request()
  local id = ids[math.random(#ids)]
  return wrk.format("GET", "/api/minions/" .. id .. "/runs")
end
