-- POST a hosted form as a browser would: the CSRF cookie and token, the signed shown time and the answers
-- (all from one GET of the form, by benchmarks/forms.py). The same page every time: since a page is sent once
-- (interfaces/forms/submissions.py), the first POST starts a run and the others go to its session page (303), so
-- this measures resent pages, not run starts (benchmarks/RESULTS.md, 2026-11-27, 93be979).
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
