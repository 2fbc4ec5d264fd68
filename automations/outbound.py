"""Outbound connections of HTTP request steps: one DNS answer, checked, connected to, under one deadline.

httpx resolves a host name again when it connects, so a check made before
the request can be answered differently at connect time (DNS rebinding).
Here the name is resolved once, every answer is checked, the socket connects
to a checked address, and its peer is checked again before a byte is sent.
TLS still verifies the certificate against the host name, which httpcore
passes on as the SNI name. httpx takes no network backend of its own:
overrides/httpcore_pool.py builds its transport over this one.

httpx's timeouts apply to each read and write; this backend also ends every
operation (resolving, connecting, the TLS handshake, each write and each
read) by one deadline, so a server that trickles bytes cannot hold a step
past it.
"""

import ipaddress
import select
import socket
import ssl
import threading
import time

import httpcore
import httpx

from automations import addresses
from overrides import httpcore_pool


class AddressRefused(Exception):
    """The destination resolves to, or connected to, an address requests may not reach."""


def refusal(host: str, address: str) -> AddressRefused:
    return AddressRefused(
        f"{host} is an internal address ({addresses.describe(address)}); requests there are not allowed"
        " unless HTTP_STEP_ALLOW_PRIVATE is on"
    )


class Deadline:
    """A time.monotonic() by which the whole request must end."""

    def __init__(self, at: float):
        self.at = at

    def left(self, timeout: float | None, error: type[httpcore.TimeoutException]) -> float:
        """timeout, or less when the deadline is nearer; error once it has passed."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise error("the request passed its time limit")
        return left if timeout is None else min(timeout, left)


def _resolve(host: str, port: int, timeout: float) -> list:
    """getaddrinfo, given up after timeout: it has none of its own. A lookup given up on finishes in its thread."""
    answer = {}

    def lookup():
        try:
            answer["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError, ValueError) as error:
            answer["error"] = error

    thread = threading.Thread(target=lookup, name="http-step-resolve", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise httpcore.ConnectTimeout(f"resolving {host} took too long")
    if "error" in answer:
        raise httpcore.ConnectError(f"cannot resolve {host}: {answer['error']}")
    return answer["infos"]


class GuardedBackend(httpcore.NetworkBackend):
    """Resolves once, refuses internal addresses (unless allow_private), connects only to what it checked."""

    def __init__(self, *, deadline: float, allow_private: bool):
        self.deadline = Deadline(deadline)
        self.allow_private = allow_private

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> httpcore.NetworkStream:
        infos = _resolve(host, port, self.deadline.left(timeout, httpcore.ConnectTimeout))
        if not self.allow_private:
            for *_, sockaddr in infos:
                if not addresses.is_reachable(sockaddr[0]):
                    raise refusal(host, sockaddr[0])
        failure = OSError("no address")
        for family, kind, proto, _, sockaddr in infos:
            sock = socket.socket(family, kind, proto)
            try:
                for option in socket_options or ():
                    sock.setsockopt(*option)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if local_address is not None:
                    sock.bind((local_address, 0))
                sock.settimeout(self.deadline.left(timeout, httpcore.ConnectTimeout))
                sock.connect(sockaddr)
            except OSError as error:
                sock.close()
                failure = error
                continue
            except BaseException:
                sock.close()
                raise
            self._check_peer(sock, host, sockaddr[0])
            return GuardedStream(sock, self.deadline)
        error_class = httpcore.ConnectTimeout if isinstance(failure, TimeoutError) else httpcore.ConnectError
        raise error_class(f"cannot connect to {host}: {failure}")

    def _check_peer(self, sock: socket.socket, host: str, checked: str) -> None:
        """The address actually connected to must be the one checked, and public: checked at connect time."""
        if self.allow_private:
            return
        try:
            peer = sock.getpeername()[0]
            if not addresses.is_reachable(peer):
                raise refusal(host, peer)
            if ipaddress.ip_address(peer) != ipaddress.ip_address(checked):
                raise AddressRefused(f"{host}: connected to {peer}, not to the checked address {checked}")
        except BaseException:
            sock.close()
            raise


class GuardedStream(httpcore.NetworkStream):
    """A socket whose every operation ends by the request's deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline):
        self._sock = sock
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._sock.settimeout(self._deadline.left(timeout, httpcore.ReadTimeout))
            return self._sock.recv(max_bytes)
        except TimeoutError as error:
            raise httpcore.ReadTimeout(str(error) or "timed out") from error
        except OSError as error:
            raise httpcore.ReadError(str(error)) from error

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # One send at a time, each bounded by what is left: a peer that reads slowly cannot stretch the whole write.
        try:
            while buffer:
                self._sock.settimeout(self._deadline.left(timeout, httpcore.WriteTimeout))
                buffer = buffer[self._sock.send(buffer) :]
        except TimeoutError as error:
            raise httpcore.WriteTimeout(str(error) or "timed out") from error
        except OSError as error:
            raise httpcore.WriteError(str(error)) from error

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        try:
            self._sock.settimeout(self._deadline.left(timeout, httpcore.ConnectTimeout))
            wrapped = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except TimeoutError as error:
            self.close()
            raise httpcore.ConnectTimeout(str(error) or "timed out") from error
        except OSError as error:
            self.close()
            raise httpcore.ConnectError(str(error)) from error
        except BaseException:
            self.close()
            raise
        return GuardedStream(wrapped, self._deadline)

    def get_extra_info(self, info: str):
        if info == "ssl_object" and isinstance(self._sock, ssl.SSLSocket):
            return self._sock  # httpcore asks it for selected_alpn_protocol(), which SSLSocket answers
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            if self._sock.fileno() == -1:
                return True
            poll = select.poll()
            poll.register(self._sock, select.POLLIN)
            return bool(poll.poll(0))
        return None


def client(*, deadline: float, allow_private: bool, timeout: float) -> httpx.Client:
    """A client for one step's request: no redirects, no proxy or certificates from the environment."""
    transport = httpcore_pool.BackendTransport(
        network_backend=GuardedBackend(deadline=deadline, allow_private=allow_private),
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=1,
    )
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False)
