-- POST a small JSON body, as a webhook sender would; each body differs so none is a duplicate.
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, '{"event": "signup", "n": ' .. n .. '}')
end
