"""Request bodies through real servers: cut off, malformed, slow, or not worth reading.

Each test runs against the web process (gunicorn's threaded worker serving
config.wsgi) and the hooks process (uvicorn's worker, edge/asgi_worker.py,
serving config.asgi), because each reads bodies its own way: the web process with
blocking reads in its threads (edge/bodies.py), the hooks process on its
event loop, for webhooks and for what it hands to Django through a2wsgi's
threads (hooks/asgi.py). Webhooks are answered by the hooks process alone:
in the web process the tests send web services, and a web service key that
is no one's stands for a miss answered before its body. The servers the tests share give bodies two seconds
(REQUEST_BODY_TIMEOUT_SECONDS=2).
"""

import select
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings
from django.db import connection

from automations import services as automation_services
from automations.models import Run, WebServiceUsage
from hooks.models import Delivery
from tests.e2e.stack import Stack

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor != "postgresql", reason="real servers run on PostgreSQL and Redis"
    ),
]
LIMIT = 100_000
# More than the threads of both processes of either kind (2 processes of 8), so that, however the kernel
# deals the connections over the processes, every thread that reads bodies is taken.
SLOW_CLIENTS = 40
SET_N = [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}]
RESPOND = [{"id": "r", "kind": "respond", "body": {"got": "{{trigger.body}}"}}]
BROKEN = {
    "cut off": ("Content-Length", "1000", b'{"n": 1, "padding": "' + b"x" * 22),  # 44 of 1,000 bytes
    "bad chunk size": ("Transfer-Encoding", "chunked", b"zz\r\n{}\r\n0\r\n\r\n"),
    "chunk without terminator": ("Transfer-Encoding", "chunked", b"2\r\n{}XX0\r\n\r\n"),
    "no last chunk": ("Transfer-Encoding", "chunked", b"2\r\n{}\r\n"),
}


@pytest.fixture(scope="module", params=["web process", "hooks process"])
def server(request, tmp_path_factory, django_db_setup):
    running = Stack(tmp_path_factory.mktemp("bodies"), HOOK_MAX_BODY_BYTES=str(LIMIT), REQUEST_BODY_TIMEOUT_SECONDS="2")
    running.hooks_process = request.param == "hooks process"
    running.start_web(hooks_process=running.hooks_process, web_only=not running.hooks_process)
    running.miss = "/automation-nobodys" if running.hooks_process else "/webservice-nobodys"
    yield running
    running.stop()
    assert "Traceback" not in running.log("web")


@pytest.fixture(params=["webhook", "web service"])
def kind(request):
    return request.param


@pytest.fixture
def path(kind, make_automation, server):
    if kind == "webhook" and not server.hooks_process:
        pytest.skip("webhooks are answered by the hooks process alone")
    if kind == "webhook":
        return urlsplit(automation_services.hook_url(make_automation(SET_N))).path
    return urlsplit(automation_services.web_service_url(make_automation(RESPOND))).path


def kept() -> dict:
    return {
        "deliveries": Delivery.objects.count(),
        "runs": Run.objects.count(),
        "quota": WebServiceUsage.objects.count(),
    }


NOTHING = {"deliveries": 0, "runs": 0, "quota": 0}


def head(server, path: str, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Content-Type: application/json"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(answer: bytes) -> int | None:
    """The status of the first response in answer; None for no answer (the connection was closed)."""
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def send_and_finish(server, data: bytes) -> bytes:
    """Send data, close the sending side (the client is done, or gone), and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
        return answer


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One response from a kept-alive connection: its status and body (by Content-Length)."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {answer!r}"
        answer += chunk
    header, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return status_of(header), body


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """What arrives until marker has, or the server closes or resets the connection."""
    answer = b""
    try:
        while marker not in answer and (chunk := sock.recv(65536)):
            answer += chunk
    except ConnectionResetError:
        pass
    return answer


RESET = b"(reset by the server)"
GAVE_UP = b"(the client gave up)"


def trickle(server, data: bytes, started: threading.Barrier | None = None) -> bytes:
    """A slow client: send data (headers), then one byte every half second until the server answers; the answer.

    Its body (1,000 bytes declared) would take over eight minutes; it gives up after one.
    """
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        for sent in range(120):
            if started is not None and sent == 2:
                started.wait()
            answered, _, _ = select.select([sock], [], [], 0.5)  # the pace of the trickle, and a look for an answer
            if answered:
                try:
                    return sock.recv(65536)
                except ConnectionResetError:
                    # The server closed with our last bytes unread: the kernel's reset can overtake its answer.
                    return RESET
            sock.sendall(b" ")
        return GAVE_UP


def leave_mid_body(server, path: str) -> None:
    """Wait until the server asks for the body (Expect: 100-continue), send 44 of 1,000 bytes, and close."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head(server, path, Content_Length="1000", Expect="100-continue"))
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 ")
        sock.sendall(BROKEN["cut off"][2])


@pytest.mark.parametrize("process", ["web process", "hooks process"])
def test_cut_off_and_malformed_bodies_are_never_stored_nor_run(tmp_path, make_automation, process):
    running = Stack(tmp_path)
    running.start_web(hooks_process=process == "hooks process", web_only=process == "web process")
    paths = {"web service": urlsplit(automation_services.web_service_url(make_automation(RESPOND))).path}
    if process == "hooks process":
        paths["webhook"] = urlsplit(automation_services.hook_url(make_automation(SET_N))).path
    answers = {}
    for kind, path in paths.items():
        for case, (name, value, body) in BROKEN.items():
            answers[kind, case] = status_of(
                send_and_finish(running, head(running, path, **{name.replace("-", "_"): value}) + body)
            )
        leave_mid_body(running, path)
    running.stop()  # gunicorn ends every request it started before it exits: whatever would be kept now is
    assert kept() == NOTHING
    # Answered 400, or not answered: the hooks process does not answer a client that closed its side.
    assert set(answers.values()) <= {400, None}, answers
    assert "Traceback" not in running.log("web")


def test_a_body_still_arriving_at_its_deadline_gets_408_and_nothing_is_kept(server, path):
    answer = trickle(server, head(server, path, Content_Length="1000") + b'{"n": ')
    # Cut off by the server, not left to give up after a minute: answered 408, or closed (the answer can be lost
    # when the server closes a connection with bytes unread, or sees the client's next byte first).
    assert answer in (RESET, b"") or status_of(answer) == 408, answer
    assert kept() == NOTHING


def test_what_follows_a_late_body_is_never_read_as_a_next_request(server, path):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head(server, path, Content_Length="1000") + b'{"n": ')  # and nothing more until the 408
        answer = sock.recv(65536)
        assert status_of(answer) == 408
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    assert answer.count(b"HTTP/1.1 ") == 1  # the connection closed after the 408
    assert b"\r\nconnection: close\r\n" in answer.lower()  # as it said it would


@pytest.mark.parametrize(
    ("case", "size"),
    [
        ("413", 2 * LIMIT),  # refused by its declared length, and more than gunicorn skips to reuse a connection
        ("404", 65_536),  # no one's key: answered before its body; exactly what gunicorn no longer skips
        ("404", 65_535),  # the most it skips
    ],
)
def test_a_connection_kept_alive_after_an_answer_given_before_its_body_was_read_serves_the_next_request(
    server, path, case, size
):
    """Closed after such an answer, the connection must say so; kept alive, it must serve the next request."""
    target = path if case == "413" else server.miss
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        try:
            sock.sendall(head(server, target, Content_Length=str(size)) + b"x" * size)
        except OSError:  # the server answered and closed while the body was on its way
            pass
        answer = read_until(sock, b"\r\n\r\n")
        assert status_of(answer) == int(case)
        said_close = b"\r\nconnection: close\r\n" in answer.lower()
        if case == "413" and not server.hooks_process:
            assert said_close  # a web process never skips that much
        if not said_close:
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            rest = read_until(sock, b"HTTP/1.1 200 ")
            assert b"HTTP/1.1 200 " in rest, f"kept alive, then closed: {answer!r}"


def test_a_small_body_left_unread_keeps_the_connection_for_the_next_request(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        body = b"x" * 1000  # a key that is no one's: 404 before the body is read
        sock.sendall(head(server, server.miss, Content_Length=str(len(body))) + body)
        assert read_response(sock)[0] == 404
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        assert read_response(sock)[0] == 200


def test_the_health_check_answers_while_more_slow_clients_than_threads_are_connected(server, make_automation):
    path = urlsplit(automation_services.web_service_url(make_automation(RESPOND))).path
    started = threading.Barrier(SLOW_CLIENTS + 1)
    with ThreadPoolExecutor(SLOW_CLIENTS) as pool:
        slow = [
            pool.submit(trickle, server, head(server, path, Content_Length="1000"), started)
            for _ in range(SLOW_CLIENTS)
        ]
        started.wait(timeout=60)  # every slow client is connected and has trickled for a second
        health = httpx.get(server.base + "/healthz", timeout=30)
        answers = [client.result() for client in slow]
    assert health.status_code == 200
    assert all(answer in (RESET, b"") or status_of(answer) == 408 for answer in answers), answers
    assert kept() == NOTHING


def test_a_remembered_key_of_a_deleted_automation_gets_404_before_a_large_body_is_sent(server, make_automation):
    if not server.hooks_process:
        pytest.skip("webhooks are answered by the hooks process alone")
    automation = make_automation(SET_N)
    path = urlsplit(automation_services.hook_url(automation)).path
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            head(server, path, Content_Length="2") + b"{}"
        )  # the process serving this connection remembers the key
        assert read_response(sock)[0] == 200
        automation_services.delete_automation(automation=automation)
        sock.sendall(head(server, path, Content_Length=str(LIMIT - 1)))  # and no body: the answer must not wait for it
        assert read_response(sock)[0] == 404
    assert not Delivery.objects.exists()


def test_a_remembered_key_with_a_large_chunked_body_is_looked_up_afresh(server, make_automation):
    if not server.hooks_process:
        pytest.skip("webhooks are answered by the hooks process alone")
    automation = make_automation(SET_N)
    path = urlsplit(automation_services.hook_url(automation)).path
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head(server, path, Content_Length="2") + b"{}")
        assert read_response(sock)[0] == 200
        automation_services.delete_automation(automation=automation)
        sock.sendall(head(server, path, Transfer_Encoding="chunked") + b"2\r\n{}\r\n")  # the rest never comes
        assert read_response(sock)[0] == 404
