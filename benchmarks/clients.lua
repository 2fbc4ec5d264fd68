-- Requests from many clients through one trusted proxy: every REQUESTS_PER_CLIENT
-- requests the X-Forwarded-For address changes, so each client stays within its
-- rate limit and the counters are those a crowd of real clients would use.
-- CLIENT_OFFSET starts each run on addresses no earlier run used.
local per = tonumber(os.getenv("REQUESTS_PER_CLIENT") or "200")
local offset = tonumber(os.getenv("CLIENT_OFFSET") or "0")
local n = 0

request = function()
  local c = offset + math.floor(n / per)
  n = n + 1
  wrk.headers["X-Forwarded-For"] = string.format("10.%d.%d.%d",
    math.floor(c / 65536) % 256, math.floor(c / 256) % 256, c % 256)
  return wrk.format(nil)
end
