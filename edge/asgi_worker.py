"""The hooks process's server: uvicorn's worker (uvloop, httptools) under gunicorn's master.

Chosen by measurement against gunicorn's own asyncio worker and granian
(benchmarks/hooks_servers.py, benchmarks/RESULTS.md); gunicorn's master keeps
what every other process has from config/gunicorn.py: a socket per process,
the redacting logger, the refusal of a port already in use.

Three things uvicorn does not do (a client's half-close, a deadline for
headers, header names with underscores) are added to its HTTP/1 protocol in
overrides/uvicorn_protocol.py; overrides/uvicorn_worker_sockets.py hands
uvicorn the listening sockets rather than gunicorn's wrappers.
"""

import logging

from config.env import request_body_timeout
from overrides.uvicorn_protocol import Protocol
from overrides.uvicorn_worker_sockets import UnwrappedSocketsWorker


class Worker(UnwrappedSocketsWorker):
    # proxy_headers off: the client's address and scheme are read by edge/clients.py and Django's settings from
    # what the socket says, as in the web process; uvicorn would otherwise rewrite them from X-Forwarded-*.
    CONFIG_KWARGS = {"loop": "uvloop", "http": Protocol, "proxy_headers": False, "server_header": False}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        Protocol.header_seconds = request_body_timeout()
        # uvicorn's access lines go to gunicorn's access handlers (which redact URL keys), with the time first as
        # gunicorn's own lines have it; nothing else in this process writes to those handlers.
        for handler in logging.getLogger("uvicorn.access").handlers:
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "[%d/%b/%Y:%H:%M:%S %z]"))
