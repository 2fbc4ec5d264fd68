-- POST a 1 KB JSON body, as a webhook sender would; each body differs (its n), so none is a duplicate.
local n = 0
local pad = string.rep("x", 960)
request = function()
  n = n + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"},
    '{"event": "signup", "n": ' .. n .. ', "pad": "' .. pad .. '"}')
end
