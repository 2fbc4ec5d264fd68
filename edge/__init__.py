"""The request edge: what every request and answer meets whichever process serves it, before and around a view.

The security headers of every answer (headers.py), request bodies within
their deadline and limit (bodies.py), the one parser of JSON bodies
(json_bodies.py), who a request comes from (clients.py), and the policy
table of the low-rate limits (limits.py). config/ and the apps build on it;
it imports none of them (json_bodies.py reads JSON as automations/jsonsafe.py,
a module of plain functions, does), and reaches servers' private parts only
through overrides/.
"""
