-- POST a small JSON body signed as Standard Webhooks senders sign it, each request with a webhook-id of its own.
-- wrk's Lua has no HMAC: benchmarks/webhooks.py signs the requests beforehand, one per line of the file that
-- BENCH_SIGNED names ("<webhook-id> <timestamp> <signature> <body>"), a fresh file for every run of wrk.
local lines = io.lines(os.getenv("BENCH_SIGNED"))
request = function()
  local id, timestamp, signature, body = lines():match("^(%S+) (%S+) (%S+) (.*)$")
  local headers = {
    ["Content-Type"] = "application/json",
    ["webhook-id"] = id,
    ["webhook-timestamp"] = timestamp,
    ["webhook-signature"] = signature,
  }
  return wrk.format("POST", nil, headers, body)
end
