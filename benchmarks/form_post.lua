-- POST a hosted form as a browser would: the CSRF cookie and token, the signed shown time and the answers
-- (all from one GET of the form, by benchmarks/forms.py). Each POST starts a run (303 to its session page).
local cookie = os.getenv("FORM_COOKIE")
local body = os.getenv("FORM_BODY")
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Cookie"] = cookie,
  }, body .. "&note=" .. n)
end
