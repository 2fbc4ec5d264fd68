"""The request edge: what every request and answer meets whichever process serves it, before and around a view.

The security headers of every answer (headers.py), request bodies within
their deadline and limit (bodies.py), the one parser of JSON bodies
(json_bodies.py), who a request comes from (clients.py), and the policy
table of the low-rate limits (limits.py); and the plumbing of the servers
that carry them: gunicorn's configuration (gunicorn.py), host routing
(hosts.py), log lines and error reports without keys or OAuth credentials
(logs.py, redaction.py, error_reports.py), `make run`'s process manager
(procfile.py) and the process-wide memories (process_cache.py). config/ and
the apps build on it; of them it reads only leaves (config/env.py,
automations/jsonsafe.py, publickeys/redaction.py: modules of plain
functions), and reaches servers' private parts only through overrides/.
"""
