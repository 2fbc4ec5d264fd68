"""The HTTP request step against local servers: where it connects, how much it reads, how long it may take.

Two parts of the outside world are stood in for: DNS (socket.getaddrinfo
answers made-up names, and no other name) and the public network (a fence
refuses, before it leaves the machine, any connection to an address other
than loopback). Every byte stays on this machine.
"""

import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from automations import engine, runs
from automations.models import Run
from automations.steps import WAIT_TIMED_OUT, StepContext, StepFailed, http_request

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.215.14"  # a public address; the fence keeps any connection to it on this machine


class LocalServer:
    """A loopback TCP server running handle(connection, server) per connection; counts what it sent and read."""

    def __init__(self, handle):
        self.handle = handle
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.sent = 0
        self.trickled = 0
        self.received = bytearray()
        self.sni = []
        self.finished = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection):
        try:
            with connection:
                self.handle(connection, self)
        except (OSError, ValueError):  # the step hung up, as it should
            pass
        finally:
            self.finished.set()

    def send(self, connection, data: bytes):
        connection.sendall(data)
        self.sent += len(data)

    def read_request(self, connection) -> bytes:
        while b"\r\n\r\n" not in self.received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            self.received += chunk
        return bytes(self.received)

    def close(self):
        self.listener.close()


@pytest.fixture
def serve():
    servers = []

    def start(handle):
        servers.append(LocalServer(handle))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def answer(body: bytes = b"hello", content_type: str = "text/plain", extra: bytes = b""):
    def handle(connection, server):
        server.read_request(connection)
        server.send(
            connection,
            b"HTTP/1.1 200 OK\r\nContent-Type: "
            + content_type.encode()
            + b"\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: close\r\n"
            + extra
            + b"\r\n"
            + body,
        )

    return handle


def read_to_the_end(connection, server):
    while chunk := connection.recv(65536):
        server.received += chunk


@pytest.fixture(autouse=True)
def dns(monkeypatch):
    """Answers for made-up names (an address, a list, or a function), in turn per lookup; no other name resolves."""
    answers, asked = {}, []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            try:
                ipaddress.ip_address(host)
            except ValueError:
                raise socket.gaierror(socket.EAI_NONAME, "not a name this test answers") from None
            return real(host, port, *args, **kwargs)
        asked.append(host)
        found = answers[host][(asked.count(host) - 1) % len(answers[host])]
        found = found() if callable(found) else found
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port, 0, 0))
            if ":" in address
            else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))
            for address in ([found] if isinstance(found, str) else found)
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers, asked


@pytest.fixture
def fence(monkeypatch):
    """Connections to anything but loopback are refused (or sent where `moved` says) and recorded, never made."""
    attempts, moved = [], {}
    real = socket.socket.connect

    def connect(sock, address):
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or ipaddress.ip_address(address[0]).is_loopback:
            return real(sock, address)
        attempts.append(address[:2])
        if address[0] in moved:
            return real(sock, (moved[address[0]], address[1]))
        raise ConnectionRefusedError(f"the test fence keeps {address[0]} off the network")

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts, moved


def call(settings_: dict, deadline: float | None = None) -> dict:
    return http_request.run(settings_, StepContext(automation=None, data={}, deadline=deadline))


def failure(settings_: dict) -> str:
    with pytest.raises(StepFailed) as failed:
        call(settings_)
    return str(failed.value)


def test_it_connects_only_to_the_address_it_checked(serve, dns, fence):
    """DNS rebinding: a public answer to the check, loopback to a second lookup; the second never comes."""
    local = serve(read_to_the_end)
    answers, asked = dns
    answers["rebind.example.test"] = [PUBLIC, "127.0.0.1"]
    attempts, _ = fence
    error = failure({"url": f"http://rebind.example.test:{local.port}/secret"})
    assert "ConnectError" in error
    assert asked == ["rebind.example.test"]  # resolved once
    assert attempts == [(PUBLIC, local.port)]  # and connected only to the address checked
    assert (local.connections, local.received) == (0, bytearray())


def test_it_refuses_a_name_with_any_internal_answer(serve, dns, fence):
    local = serve(read_to_the_end)
    answers, _ = dns
    answers["inside.example.test"] = [
        [PUBLIC, "10.1.2.3"],
        "::1",
        "169.254.169.254",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        [PUBLIC, "64:ff9b::a9fe:a9fe"],
        "2002:a00:1::1",
    ]
    for _ in range(7):
        error = failure({"url": f"http://inside.example.test:{local.port}/"})
        assert "inside.example.test is an internal address" in error
    assert fence[0] == [] and local.connections == 0


def test_it_checks_the_peer_address_when_it_connects(serve, dns, fence):
    """A connection to a checked public address that lands on loopback is closed before a byte is sent."""
    local = serve(read_to_the_end)
    dns[0]["moved.example.test"] = [PUBLIC]
    attempts, moved = fence
    moved[PUBLIC] = "127.0.0.1"
    error = failure({"url": f"http://moved.example.test:{local.port}/secret"})
    assert error == (
        "moved.example.test is an internal address (127.0.0.1); requests there are not allowed"
        " unless HTTP_STEP_ALLOW_PRIVATE is on"
    )
    assert attempts == [(PUBLIC, local.port)]
    assert local.finished.wait(10)
    assert (local.connections, local.received) == (1, bytearray())


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::7f00:1", "64:ff9b:1::7f00:1", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe", "::127.0.0.1"],
)
def test_it_refuses_an_ipv6_address_that_leads_to_a_loopback_server(serve, fence, address):
    """The fence carries a connection there to 127.0.0.1, as a NAT64 translator or a 6to4 or Teredo relay would."""
    local = serve(answer(b"internal"))
    attempts, moved = fence
    moved[address] = "::ffff:127.0.0.1"
    error = failure({"url": f"http://[{address}]:{local.port}/secret"})
    assert error.startswith(f"{address} is an internal address ({address}")
    assert error.endswith("; requests there are not allowed unless HTTP_STEP_ALLOW_PRIVATE is on")
    assert (attempts, local.connections) == ([], 0)


def test_it_calls_private_addresses_when_allowed(serve, dns, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    local = serve(answer(b'{"ok": true}', "application/json"))
    dns[0]["internal.example.test"] = ["127.0.0.1"]
    output = call({"url": f"http://internal.example.test:{local.port}/x"})
    assert (output["status"], output["body"]) == (200, {"ok": True})
    assert b"Host: internal.example.test:" in local.received


def test_a_redirect_is_the_steps_output_and_never_followed_to_where_it_points(serve, dns, settings):
    """A public URL that redirects to an internal address would otherwise lead the worker past the address guard."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the redirecting app is on loopback here
    inside = serve(read_to_the_end)
    location = f"http://127.0.0.1:{inside.port}/secret".encode()

    def moved(connection, server):
        server.read_request(connection)
        server.send(connection, b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\nContent-Length: 0\r\n\r\n")

    redirecting = serve(moved)
    output = call({"url": f"http://127.0.0.1:{redirecting.port}/go", "fail_on_error_status": False})
    assert output["status"] == 302 and output["headers"]["location"] == location.decode()
    assert inside.connections == 0


def certificates(tmp_path, name: str) -> dict:
    """A certificate authority and a server certificate for name, signed by it."""
    now = datetime.datetime.now(datetime.UTC)

    def issue(subject, key, issuer, issuer_key, *, ca: bool):
        day = datetime.timedelta(days=1)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - day)
            .not_valid_after(now + day)
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = issue("Test CA", ca_key, "Test CA", ca_key, ca=True)
    server = issue(name, server_key, "Test CA", ca_key, ca=False)
    files = {"ca": tmp_path / "ca.pem", "cert": tmp_path / "server.pem", "key": tmp_path / "server.key"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return files


@pytest.fixture
def tls_app(serve, tmp_path, dns, settings):
    """A loopback HTTPS server with a certificate for api.example.test; that name and other.example.test lead to it."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    files = certificates(tmp_path, "api.example.test")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files["cert"], files["key"])

    def handle(connection, server):
        context.sni_callback = lambda sock, name, _: server.sni.append(name)
        with context.wrap_socket(connection, server_side=True) as tls:
            answer(b"over tls")(tls, server)

    server = serve(handle)
    dns[0]["api.example.test"] = dns[0]["other.example.test"] = ["127.0.0.1"]
    return server, files


def test_it_verifies_the_certificate_against_the_host_name_and_sends_it_as_sni(tls_app, monkeypatch):
    import certifi

    server, files = tls_app
    monkeypatch.setattr(certifi, "where", lambda: str(files["ca"]))  # the test authority stands in for the public ones
    output = call({"url": f"https://api.example.test:{server.port}/"})
    assert (output["status"], output["body"]) == (200, "over tls")
    assert server.sni == ["api.example.test"]
    error = failure({"url": f"https://other.example.test:{server.port}/"})
    assert "ConnectError" in error and "certificate verify failed" in error and "other.example.test" in error


def test_it_ignores_proxies_and_certificate_authorities_named_in_the_environment(tls_app, serve, monkeypatch):
    server, files = tls_app
    proxy = serve(answer(b"from the proxy"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(files["ca"]))
    app = serve(answer(b"direct"))
    assert call({"url": f"http://127.0.0.1:{app.port}/"})["body"] == "direct"
    assert "certificate verify failed" in failure({"url": f"https://api.example.test:{server.port}/"})
    assert proxy.connections == 0


def endless(declared: bool):
    """A body of 32 MB, chunked or with its length declared; the server stops sending when the step hangs up."""

    def handle(connection, server):
        server.read_request(connection)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
        framing = b"Content-Length: 33554432" if declared else b"Transfer-Encoding: chunked"
        server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + framing + b"\r\n\r\n")
        piece = b"x" * 16384
        for _ in range(2048):
            server.send(connection, piece if declared else b"4000\r\n" + piece + b"\r\n")
        if not declared:
            server.send(connection, b"0\r\n\r\n")

    return handle


@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "declared-length"])
def test_it_stops_reading_a_response_as_soon_as_it_passes_the_size_cap(serve, settings, monkeypatch, declared):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    monkeypatch.setattr(http_request, "MAX_RESPONSE_BYTES", 65536)
    app = serve(endless(declared))
    error = failure({"url": f"http://127.0.0.1:{app.port}/big"})
    assert error == "the response is larger than 65536 bytes; reading stopped there"
    assert app.finished.wait(30)
    assert app.sent < 4 * 1024 * 1024  # the cap plus what the sockets' buffers hold, not the 32 MB offered


def test_it_decodes_a_compressed_response_before_the_cap_and_the_json_parse(serve, settings, monkeypatch):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    document = json.dumps({"items": ["x" * 100] * 1000}).encode()
    app = serve(answer(gzip.compress(document), "application/json", b"Content-Encoding: gzip\r\n"))
    assert call({"url": f"http://127.0.0.1:{app.port}/"})["body"] == json.loads(document)
    monkeypatch.setattr(http_request, "MAX_RESPONSE_BYTES", len(document) - 1)  # compressed, it would fit
    assert "larger than" in failure({"url": f"http://127.0.0.1:{app.port}/"})


def trickle(where: str):
    """Answers one byte every 0.2 s, in the headers or in a body of 50 bytes; counts the bytes it trickled."""

    def handle(connection, server):
        server.read_request(connection)
        length = b"50" if where == "body" else b"0"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + length + b"\r\n\r\n"
        if where == "body":
            server.send(connection, head)
        for byte in head if where == "headers" else b"x" * 50:
            server.send(connection, bytes([byte]))
            server.trickled += 1
            time.sleep(0.2)

    return handle


@pytest.mark.parametrize("where", ["headers", "body"])
def test_it_ends_a_trickling_response_at_its_time_limit(serve, settings, where):
    """The timeout bounds the whole request, not each read: about five bytes of fifty or more, then the step fails."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    app = serve(trickle(where))
    error = failure({"url": f"http://127.0.0.1:{app.port}/", "timeout_seconds": 1})
    assert error == f"GET http://127.0.0.1:{app.port}/ failed: ReadTimeout: no complete response within 1 s"
    assert app.finished.wait(30)
    assert app.trickled <= 15


def test_a_trickling_response_ends_when_the_run_s_deadline_passes(serve, settings, make_automation):
    """The run's deadline (a web service caller's wait, a delivery's lease) bounds the step like its own timeout."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    app = serve(trickle("body"))
    automation = make_automation([{"id": "call", "kind": "http_request", "url": f"http://127.0.0.1:{app.port}/"}])
    run = runs.start(automation=automation, trigger={"body": {}}, source=Run.Source.WEB_SERVICE)
    engine.advance(run, deadline=time.monotonic() + 1)
    run.save()
    run.refresh_from_db()
    assert (run.status, run.error) == (Run.Status.FAILED, f"step call: {WAIT_TIMED_OUT}")
    assert app.finished.wait(30)
    assert app.trickled <= 15


def test_it_ends_a_slowly_read_request_body_at_its_time_limit(serve, settings):
    """Sending counts against the same limit: a server that reads 64 KB every 0.05 s gets a small part of 16 MB."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True

    def slow_reader(connection, server):
        while chunk := connection.recv(65536):
            server.received += chunk
            time.sleep(0.05)

    app = serve(slow_reader)
    error = failure(
        {
            "url": f"http://127.0.0.1:{app.port}/",
            "method": "POST",
            "body": "x" * (16 * 1024 * 1024),
            "timeout_seconds": 1,
        }
    )
    read_by_then = len(app.received)
    assert "WriteTimeout: no complete response within 1 s" in error
    assert read_by_then < 8 * 1024 * 1024


def test_it_gives_up_a_name_lookup_at_its_time_limit(dns, fence):
    released = threading.Event()
    dns[0]["slow.example.test"] = [lambda: released.wait(20) and PUBLIC]
    try:
        error = failure({"url": "http://slow.example.test/", "timeout_seconds": 1})
    finally:
        released.set()
    assert error == "GET http://slow.example.test/ failed: ConnectTimeout: no complete response within 1 s"
    assert fence[0] == []


def test_it_reads_a_body_whose_charset_is_no_text_encoding(serve, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    for charset in ("hex", "base64", "rot13", "zlib", "idna", "no-such-charset"):
        app = serve(answer("héllo".encode(), f"text/plain; charset={charset}"))
        assert call({"url": f"http://127.0.0.1:{app.port}/"})["body"] == "héllo", charset


def test_it_keeps_json_nested_too_deep_to_parse_as_text(serve, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    deep = b"[" * 5000 + b"]" * 5000
    app = serve(answer(deep, "application/json"))
    assert call({"url": f"http://127.0.0.1:{app.port}/"})["body"] == deep.decode()


@pytest.mark.parametrize(
    ("settings_", "expected"),
    [
        ({"url": "http://[zz]/"}, "not a valid URL"),
        ({"url": "http://127.0.0.1:99999/"}, "not a valid URL"),
        ({"url": "http://exa\x00mple.test/"}, "failed: InvalidURL"),
        ({"url": "http://xn--zz/"}, "failed: IDNAError"),
        ({"url": "http://127.0.0.1:9/", "headers": {"X-Name": "Jos\u00e9"}}, "failed: UnicodeEncodeError"),
        ({"url": "http://127.0.0.1:9/", "method": "POST", "json": {"n": float("nan")}}, "failed: ValueError"),
    ],
    ids=["bad-ipv6", "bad-port", "nul", "bad-idna", "non-ascii-header", "nan-json"],
)
def test_a_request_that_cannot_be_sent_fails_the_step_not_the_worker(settings_, expected, fence, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    assert expected in failure(settings_)
    assert fence[0] == []


def test_a_header_that_would_inject_another_is_refused_before_a_byte_is_sent(serve, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    app = serve(read_to_the_end)
    error = failure({"url": f"http://127.0.0.1:{app.port}/", "headers": {"X-Name": "a\r\nX-Injected: 1"}})
    assert "failed: LocalProtocolError" in error
    assert app.finished.wait(10)
    assert app.received == bytearray()


@pytest.mark.parametrize(
    "answer",
    [b"[" * 201 + b"]" * 201, b'{"a": NaN}', b"[1e999]", b'"\xff"'],
    ids=["nested 201 deep", "NaN", "1e999", "not UTF-8"],
)
def test_a_json_answer_the_run_could_not_store_is_kept_as_text(answer):
    import httpx

    from automations.steps.http_request import decoded_body

    response = httpx.Response(200, headers={"Content-Type": "application/json"})
    assert decoded_body(response, answer) == answer.decode("utf-8", errors="replace")
