-- wrk script for bench.signups: POST /api/newsletter/v1/subscribers with a unique address per
-- request. Usage: wrk -s bench/signups.lua URL -- <run-prefix>
-- Each wrk thread has its own Lua state: setup() numbers the threads so addresses never collide.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  prefix = args[1] or "run"
  counter = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local body = string.format('{"email": "%s-%d-%d@example.org"}', prefix, tid, counter)
  return wrk.format(nil, nil, nil, body)
end
