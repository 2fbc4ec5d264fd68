"""httpx's HTTPTransport over an httpcore network backend of the caller's: the pool it keeps in `_pool`, built here.

httpx takes no network backend: HTTPTransport builds its httpcore connection
pool itself, in `__init__`, and every request goes through `self._pool`. The
HTTP request step needs a backend that resolves once and checks what it
connects to (automations/outbound.py), so the pool is built here instead
and HTTPTransport's `__init__` is not run; it keeps no other state in httpx
0.28.1 (handle_request and close read `_pool` alone).
"""

import ssl

import httpcore
import httpx

WRITTEN_FOR = {"httpx": "0.28.1", "httpcore": "1.0.9"}


class BackendTransport(httpx.HTTPTransport):
    """httpx's transport whose connection pool connects through network_backend."""

    def __init__(self, *, network_backend: httpcore.NetworkBackend, ssl_context: ssl.SSLContext, max_connections: int):
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            network_backend=network_backend,
            max_connections=max_connections,
        )
