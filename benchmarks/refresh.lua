-- Refresh grants as an MCP client sends them: each wrk thread (one connection) holds one refresh token and
-- replaces it with the rotated one of every answer, as a client must (a reused one revokes its whole grant).
-- REFRESH_TOKENS: comma-separated, one per thread (benchmarks/oauth.py mints them); CLIENT_ID: a public client.
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end

function init(args)
  local tokens = {}
  for token in string.gmatch(os.getenv("REFRESH_TOKENS"), "[^,]+") do
    table.insert(tokens, token)
  end
  token = tokens[id]
  client_id = os.getenv("CLIENT_ID")
end

request = function()
  return wrk.format("POST", "/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
    "grant_type=refresh_token&client_id=" .. client_id .. "&refresh_token=" .. token)
end

response = function(status, headers, body)
  local rotated = body:match('"refresh_token"%s*:%s*"([^"]+)"')
  if rotated then
    token = rotated
  end
end
