"""The hooks process's server: uvicorn's worker (uvloop, httptools) under gunicorn's master.

Chosen by measurement against gunicorn's own asyncio worker and granian
(benchmarks/hooks_servers.py, benchmarks/RESULTS.md); gunicorn's master keeps
what every other process has from edge/gunicorn.py: a socket per process,
the redacting logger, the refusal of a port already in use.

What uvicorn does not do (a client's half-close, a deadline and size limits
for request heads, header names with underscores, repeated singleton
fields, the scheme a trusted proxy names) is added to its HTTP/1 protocol in
overrides/uvicorn_protocol.py; overrides/uvicorn_worker_sockets.py hands
uvicorn the listening sockets rather than gunicorn's wrappers.
"""

import logging
import os
import signal

from config.env import request_body_timeout, web_service_timeout
from overrides.uvicorn_protocol import Limits, Protocol
from overrides.uvicorn_worker_sockets import UnwrappedSocketsWorker


class Worker(UnwrappedSocketsWorker):
    # proxy_headers off: the client's address is read by edge/clients.py from what the socket says, as in the web
    # process; uvicorn would rewrite it from X-Forwarded-For. The scheme is taken from FORWARDED_ALLOW_IPS's peers
    # as gunicorn takes it (Protocol.on_header). ws off: the hooks host serves no WebSocket, and an upgrade would
    # bypass the protocol's checks.
    CONFIG_KWARGS = {"loop": "uvloop", "http": Protocol, "ws": "none", "proxy_headers": False, "server_header": False}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cfg = self.cfg
        Limits.header_seconds = request_body_timeout()
        Limits.answer_seconds = request_body_timeout() + web_service_timeout() + 5
        # 0 means no limit to gunicorn; here it means gunicorn's default.
        Limits.line_bytes = cfg.limit_request_line or Limits.line_bytes
        Limits.fields = cfg.limit_request_fields or Limits.fields
        Limits.field_bytes = cfg.limit_request_field_size or Limits.field_bytes
        Limits.secure_headers = {
            name.lower().encode(): value.lower() for name, value in cfg.secure_scheme_headers.items()
        }
        Limits.any_peer = "*" in cfg.forwarded_allow_ips
        Limits.peers = tuple(cfg.forwarded_allow_networks())
        # uvicorn's access lines go to gunicorn's access handlers (which redact URL keys), with the time first as
        # gunicorn's own lines have it; nothing else in this process writes to those handlers.
        for handler in logging.getLogger("uvicorn.access").handlers:
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "[%d/%b/%Y:%H:%M:%S %z]"))

    async def callback_notify(self) -> None:
        # uvicorn's loop calls this every timeout / 2 seconds. gunicorn's own workers stop once their master is
        # gone (killed, say): one left serving on its own socket would keep a new master from starting.
        if os.getppid() != self.ppid:
            self.log.info("Parent changed, shutting down: %s", self)
            os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's own graceful stop, with the lifespan's shutdown
            return
        await super().callback_notify()
