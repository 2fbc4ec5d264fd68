"""The hooks process (config/asgi.py on edge/asgi_worker.py) through a real server: SPEC 4.2 and 7.2 row by row.

Its answers follow the same rules as the web process's (hooks/answers.py);
what these tests prove is that the event loop does its part correctly:
bodies read from the socket under the limit, rows committed before the 200
(many at once, in shared batches), lookups and the maintenance switch read
without blocking, and every other path handed to Django.
"""

import socket
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings
from django.db import connection

from automations import services as automation_services
from hooks import maintenance
from hooks.models import Delivery, Maintenance
from tests.e2e.stack import Stack, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor != "postgresql",
        reason="a real hooks process runs on PostgreSQL and Redis",
    ),
]
LIMIT = 100_000
SET_N = [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}]


@pytest.fixture(scope="module")
def hooks_process(tmp_path_factory, django_db_setup):
    running = Stack(tmp_path_factory.mktemp("hooks"), HOOK_MAX_BODY_BYTES=str(LIMIT))
    running.start_web(hooks_process=True)
    yield running
    running.stop()


@pytest.fixture
def automation(make_automation):
    return make_automation(SET_N)


@pytest.fixture
def url(hooks_process, automation):
    return hooks_process.base + urlsplit(automation_services.hook_url(automation)).path


def raw(hooks_process, data: bytes, *, then_leave: bool = False, half_close: bool = False) -> bytes:
    """Send bytes as they are, and read until the server closes or stays silent for 5 s.

    then_leave: close at once; half_close: shut down the sending side, as a client done sending may, and read on.
    """
    with socket.create_connection(("127.0.0.1", hooks_process.port), timeout=5) as sock:
        sock.sendall(data)
        if then_leave:
            return b""
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return answer


def test_a_header_spelled_with_an_underscore_does_not_pass_for_one_with_dashes(hooks_process, url):
    parts = urlsplit(url)
    head = f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nX_Hook_Secret: forged\r\nContent-Length: 2"
    answer = raw(hooks_process, head.encode() + b"\r\nConnection: close\r\n\r\n{}")
    assert answer.startswith(b"HTTP/1.1 200 ") and b"forged" not in answer
    assert b"x-flowgate-delivery-id" in answer.lower()  # an ordinary delivery, not a handshake


@pytest.mark.parametrize("method", ["GET", "POST", "PUT"])
@pytest.mark.parametrize("prefix", ["/automation-", "/webhook/automation-"])
def test_get_post_and_put_get_an_empty_200_once_their_row_is_committed(url, automation, method, prefix):
    url = url.replace("/automation-", prefix)
    body = b'{"n": 1}' if method != "GET" else b""
    answer = httpx.request(method, url + "?a=1&a=2", content=body, headers={"Content-Type": "application/json"})
    assert (answer.status_code, answer.content) == (200, b"")
    delivery = Delivery.objects.get(public_id=uuid.UUID(answer.headers["X-Flowgate-Delivery-Id"]))
    assert (delivery.automation_id, delivery.method, bytes(delivery.body)) == (automation.pk, method, body)
    stored = (delivery.query_string, delivery.content_type, delivery.path)
    assert stored == ("a=1&a=2", "application/json", prefix + "{key}")  # a URL key is stored nowhere in clear
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    assert answer.headers["Access-Control-Expose-Headers"] == "X-Flowgate-Delivery-Id"
    # What Django's middleware adds to its responses, from the same settings.
    assert answer.headers["X-Content-Type-Options"] == "nosniff" and answer.headers["X-Frame-Options"] == "DENY"


def test_head_is_empty_options_is_a_preflight_and_neither_starts_anything(url):
    head = httpx.head(url)
    preflight = httpx.options(url, headers={"Access-Control-Request-Headers": "content-type"})
    assert (head.status_code, head.content) == (200, b"")
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Methods"] == "GET, POST, PUT, HEAD, OPTIONS"
    assert preflight.headers["Access-Control-Allow-Headers"] == "content-type"
    assert not Delivery.objects.exists()


@pytest.mark.parametrize("method", ["DELETE", "PATCH"])
def test_other_methods_get_405(url, method):
    answer = httpx.request(method, url, content=b"{}")
    assert answer.status_code == 405 and answer.headers["Allow"] == "GET, POST, PUT, HEAD, OPTIONS"
    assert not Delivery.objects.exists()


def test_the_handshakes_are_echoed_without_a_delivery(url):
    secret = httpx.post(url, headers={"X-Hook-Secret": "s3cret"})
    challenge = httpx.post(url, json={"challenge": "abc"})
    assert (secret.status_code, secret.headers["X-Hook-Secret"]) == (200, "s3cret")
    assert (challenge.status_code, challenge.json()) == (200, {"challenge": "abc"})
    assert not Delivery.objects.exists()


def test_a_challenge_too_deep_to_parse_is_an_ordinary_delivery(url):
    deep = b'{"challenge": ' + b"[" * 2000 + b"]" * 2000 + b"}"
    answer = httpx.post(url, content=deep, headers={"Content-Type": "application/json"})
    assert (answer.status_code, answer.content) == (200, b"")
    assert bytes(Delivery.objects.get().body) == deep


def test_a_challenge_without_a_strict_json_form_is_not_echoed(url):
    bodies = [b'{"challenge": ' + value + b"}" for value in (b"NaN", b"Infinity", b"1e999", b'"\\ud800"')]
    answers = [httpx.post(url, content=body, headers={"Content-Type": "application/json"}) for body in bodies]
    assert {(answer.status_code, answer.content) for answer in answers} == {(200, b"")}
    assert Delivery.objects.count() == len(bodies)


def test_unknown_altered_incomplete_and_deleted_keys_get_the_same_404(hooks_process, url, automation):
    misses = [url[:-1] + ("A" if url[-1] != "A" else "B"), url[:-5], hooks_process.base + "/automation-", url + "/more"]
    answers = [httpx.post(miss, json={"n": 1}) for miss in misses]
    with httpx.Client() as one_connection:  # one process, which now remembers the key
        assert one_connection.post(url, json={"n": 1}).status_code == 200
        automation.delete()
        answers.append(one_connection.post(url, json={"n": 2}))  # remembered, but its row can no longer be stored
    assert {(answer.status_code, answer.content) for answer in answers} == {(404, b"")}
    assert Delivery.objects.count() == 0  # the first delivery went with its automation


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_sent(hooks_process, url):
    path = urlsplit(url).path
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{hooks_process.port}\r\nContent-Length: {LIMIT + 1}\r\n\r\n"
    answer = raw(hooks_process, head.encode())  # no body follows: the answer must not wait for it
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert not Delivery.objects.exists()


def test_a_chunked_body_is_read_and_one_over_the_limit_refused(url):
    def chunks(size):
        for _ in range(size // 10_000):
            yield b"x" * 10_000

    with httpx.Client() as client:  # the refused body's rest must not be read as a next request on the connection
        over = client.post(url, content=chunks(LIMIT + 10_000))
        under = client.post(url, content=chunks(LIMIT - 10_000))
    assert under.status_code == 200 and over.status_code == 413
    assert [len(bytes(body)) for body in Delivery.objects.values_list("body", flat=True)] == [LIMIT - 10_000]


def test_a_client_that_leaves_mid_body_is_not_stored_and_the_process_goes_on(hooks_process, url):
    path = urlsplit(url).path
    partial = f'POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{hooks_process.port}\r\nContent-Length: 50\r\n\r\n{{"n"'
    raw(hooks_process, partial.encode(), then_leave=True)
    assert httpx.post(url, json={"n": 1}).status_code == 200
    assert Delivery.objects.count() == 1


def test_a_client_that_half_closes_after_its_request_gets_its_answer_and_the_connection_closes(hooks_process, url):
    path = urlsplit(url).path
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{hooks_process.port}\r\n"
    answer = raw(hooks_process, f'{head}Content-Length: 8\r\n\r\n{{"n": 1}}'.encode(), half_close=True)
    # The answer comes, and the connection closes after it (raw reads until then). It says Connection: close
    # when the server saw the half-close before its answer's head went out, as it mostly does.
    assert answer.startswith(b"HTTP/1.1 200 ")
    delivery_id = answer.lower().split(b"x-flowgate-delivery-id: ")[1].split(b"\r\n")[0].decode()
    assert Delivery.objects.get().public_id == uuid.UUID(delivery_id)
    cut_short = raw(hooks_process, f'{head}Content-Length: 50\r\n\r\n{{"n"'.encode(), half_close=True)
    assert cut_short.startswith(b"HTTP/1.1 400 ")
    assert Delivery.objects.count() == 1


@pytest.mark.parametrize("target", ["http://{host}{path}", "{path}#fragment", "{path}?n=1#fragment"])
def test_a_target_in_absolute_form_or_with_a_fragment_reaches_the_same_webhook(hooks_process, url, target):
    host, path = f"127.0.0.1:{hooks_process.port}", urlsplit(url).path
    request = f"POST {target.format(host=host, path=path)} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}"
    assert raw(hooks_process, request.encode(), half_close=True).startswith(b"HTTP/1.1 200 ")
    assert Delivery.objects.get().query_string == ("n=1" if "?" in target else "")


def test_concurrent_deliveries_each_get_their_own_committed_row(url):
    def deliver(numbers: range) -> list[httpx.Response]:
        # A client per thread: one pool shared by 32 threads once read a socket another thread had closed (EBADF).
        with httpx.Client() as client:
            return [client.post(url, json={"n": n}) for n in numbers]

    with ThreadPoolExecutor(32) as pool:
        answers = [answer for batch in pool.map(deliver, [range(i, 200, 32) for i in range(32)]) for answer in batch]
    ids = {answer.headers["X-Flowgate-Delivery-Id"] for answer in answers if answer.status_code == 200}
    assert len(ids) == 200
    assert set(map(str, Delivery.objects.values_list("public_id", flat=True))) == ids


def test_the_admin_maintenance_switch_answers_503_within_its_check_interval(url):
    Maintenance.objects.create(active=True)
    wait_until(lambda: httpx.post(url, json={"n": 1}).status_code == 503, 10, 0.2, "maintenance mode")
    Maintenance.objects.all().delete()
    # Each process reads the switch afresh once its CHECK_SECONDS memory of it expires. The kernel deals each new
    # connection to one of the two processes by its addresses: 30 in a row reach both (6 once all reached one, and
    # the next test met the other still in maintenance).
    wait_until(
        lambda: {httpx.post(url, json={"n": n}).status_code for n in range(30)} == {200},
        maintenance.CHECK_SECONDS * 5,
        0.2,
        "every process to leave maintenance",
    )


def test_web_services_and_other_paths_are_answered_by_django(hooks_process, make_automation):
    service = make_automation([{"id": "answer", "kind": "respond", "body": {"got": "{{trigger.body.n}}"}}])
    answer = httpx.post(hooks_process.base + urlsplit(automation_services.web_service_url(service)).path, json={"n": 7})
    assert (answer.status_code, answer.json()) == (200, {"got": 7})
    assert httpx.get(hooks_process.base + "/healthz").status_code == 200
    assert httpx.post(hooks_process.base + "/webservice-nothing").status_code == 404


def test_every_200_answered_while_the_process_stops_under_load_has_its_row(tmp_path, make_automation):
    running = Stack(tmp_path)
    running.start_web(hooks_process=True)
    automation = make_automation(SET_N)
    url = running.base + urlsplit(automation_services.hook_url(automation)).path
    answered, stopping = [], threading.Event()

    def send(client):
        while True:  # until the stopped process refuses the connection
            try:
                answer = client.post(url, json={"n": 1}, timeout=10)
            except httpx.HTTPError:
                if stopping.is_set():
                    return
                continue
            if answer.status_code == 200:
                answered.append(answer.headers["X-Flowgate-Delivery-Id"])

    with ThreadPoolExecutor(8) as pool, httpx.Client() as client:
        senders = [pool.submit(send, client) for _ in range(8)]
        wait_until(lambda: len(answered) >= 50, 30, 0.05, "deliveries before the stop")
        stopping.set()
        running.stop()  # SIGTERM while requests are in flight
        for sender in senders:
            sender.result()
    assert "Traceback" not in running.log("web")
    stored = set(map(str, Delivery.objects.values_list("public_id", flat=True)))
    assert set(answered) <= stored
