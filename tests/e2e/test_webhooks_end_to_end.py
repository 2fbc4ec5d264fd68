"""Webhooks end to end: gunicorn, a real Celery worker and beat on PostgreSQL and Redis.

Every test runs twice: as the Procfile runs the service (a web process, and
the hooks process answering webhooks on HOOKS_URL), and with one hooks process
(config/asgi.py) serving every host.

Deliveries run, off-then-on replays in order, suppression, reset, delete,
chunked and oversized bodies through a real server, and the fault test:
the worker is killed with SIGKILL in the middle of runs, and every delivery
that got a 200 still ends with exactly one successful run; the broker is
restarted while deliveries arrive, and none is lost.
"""

import http.client
import json
import shutil
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
import redis

from automations import services as automation_services
from automations.models import LookupRow, Run
from hooks.models import Delivery
from hooks.tests.test_odd_input import HOSTILE
from tests.e2e.stack import END_TO_END, Stack, free_port, wait_until
from tests.local_apps import serving, slow_handler

pytestmark = END_TO_END

RECORD = [
    {
        "id": "row",
        "kind": "lookup_rows",
        "table": "seen",
        "scope": "account",
        "action": "add",
        "values": {"n": "{{trigger.body.n}}"},
    },
]


@pytest.fixture(params=["web and hooks processes", "one hooks process"])
def stack(tmp_path, request):
    """The whole service; as the Procfile runs it, or with one hooks process serving every host."""
    running = Stack(
        tmp_path, RUN_SWEEP_SECONDS="1", DELIVERY_SWEEP_SECONDS="1", RUN_LEASE_SECONDS="6", HTTP_STEP_ALLOW_PRIVATE="1"
    )
    running.start_web(hooks_process=request.param == "one hooks process")
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def hook_url(stack, automation):
    return stack.hooks + urlsplit(automation_services.hook_url(automation)).path


def post(url, body, **headers):
    return httpx.post(
        url,
        content=body if isinstance(body, bytes) else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
        timeout=30,
    )


def settled(automation_id, expected):
    """All of the automation's deliveries are done or suppressed, as many as expected, and no run of it is still
    queued or going on."""
    states = list(Delivery.objects.filter(automation_id=automation_id).values_list("status", flat=True))
    going_on = Run.objects.filter(automation_id=automation_id, status__in=("waiting", "running")).exists()
    return len(states) == expected and set(states) <= {"done", "suppressed"} and not going_on


def test_deliveries_run_in_the_worker(stack, make_automation):
    automation = make_automation(RECORD)
    url = hook_url(stack, automation)
    for n in range(20):
        response = post(url, {"n": n})
        assert (response.status_code, response.content) == (200, b"")
        assert response.headers["X-Flowgate-Delivery-Id"]
    wait_until(lambda: settled(automation.pk, 20), 60, message="20 deliveries to run")
    runs = list(Run.objects.values_list("pk", "status", "attempt", "error", "started_at", "finished_at"))
    assert Run.objects.filter(status="succeeded").count() == 20, runs
    assert sorted(row.data["n"] for row in LookupRow.objects.all()) == list(range(20))


def test_deliveries_kept_while_off_replay_in_arrival_order(stack, make_automation):
    automation = make_automation(RECORD, enabled=False)
    url = hook_url(stack, automation)
    for n in range(10):
        assert post(url, {"n": n}).status_code == 200
    # The worker has seen every delivery and kept it (a task still queued would run at once after turn_on,
    # beside the replay and out of order); two sweeps pass too: nothing runs while it is off.
    wait_until(stack.tasks_done, 60, message="the worker to see every delivery")
    stack.sweeps_pass(2)
    assert not Run.objects.exists()
    automation_services.turn_on(automation=automation)
    wait_until(lambda: settled(automation.pk, 10), 60, message="kept deliveries to replay")
    assert [row.data["n"] for row in LookupRow.objects.order_by("pk")] == list(range(10))


def test_identical_deliveries_after_a_success_are_suppressed_even_together(stack, make_automation):
    automation = make_automation(RECORD)
    url = hook_url(stack, automation)
    assert post(url, {"n": 1}).status_code == 200
    wait_until(lambda: settled(automation.pk, 1), 30, message="the first run")
    with ThreadPoolExecutor(4) as pool:
        assert [r.status_code for r in pool.map(lambda _: post(url, {"n": 1}), range(4))] == [200] * 4
    wait_until(lambda: settled(automation.pk, 5), 30, message="the duplicates")
    assert Delivery.objects.filter(status="suppressed").count() == 4
    assert Run.objects.get().suppressed_count == 4


def test_reset_discards_what_was_kept_and_delete_answers_404(stack, make_automation):
    automation = make_automation(RECORD, enabled=False)
    url = hook_url(stack, automation)
    for n in range(3):
        post(url, {"n": n})
    wait_until(stack.tasks_done, 60, message="the worker to keep every delivery")  # not one in its hands
    automation_services.reset(automation=automation)
    automation_services.turn_on(automation=automation)
    stack.sweeps_pass(2)  # the replay turn_on queued has run, and the sweeper found nothing either
    assert not Delivery.objects.exists() and not Run.objects.exists()
    automation_services.delete_automation(automation=automation)
    assert post(url, {"n": 9}).status_code == 404


def test_chunked_bodies_are_read_and_oversized_ones_refused(stack, make_automation, tmp_path):
    automation = make_automation(RECORD)
    path = urlsplit(automation_services.hook_url(automation)).path

    def send_chunked(chunks):
        connection_ = http.client.HTTPConnection("127.0.0.1", stack.hooks_port, timeout=30)
        connection_.request(
            "POST", path, body=iter(chunks), headers={"Content-Type": "application/json"}, encode_chunked=True
        )
        response = connection_.getresponse()
        response.read()
        connection_.close()
        return response.status

    assert send_chunked([b'{"n":', b" 42}"]) == 200
    wait_until(lambda: settled(automation.pk, 1), 30, message="the chunked delivery")
    assert LookupRow.objects.get().data == {"n": 42}


def refused_status(port: int, head: bytes, pieces: list[bytes]) -> int:
    """Send a request a piece at a time, as a client does that keeps sending after the server answered and closed
    (a 413 refuses the body before its end): the status the server answered with."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            for piece in [head, *pieces]:
                sock.sendall(piece)
        except OSError:  # the server answered and closed while the body was on its way
            pass
        answer = b""
        try:
            while b"\r\n" not in answer and (chunk := sock.recv(65536)):
                answer += chunk
        except ConnectionResetError:
            pass
    return int(answer.split(b" ", 2)[1])


def test_an_oversized_chunked_body_gets_413(tmp_path, make_automation):
    running = Stack(tmp_path, HOOK_MAX_BODY_BYTES="100000")
    running.start_web()
    try:
        automation = make_automation(RECORD)
        path = urlsplit(automation_services.hook_url(automation)).path
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{running.hooks_port}\r\n".encode()
        chunked = [b"%x\r\n%s\r\n" % (60000, b"x" * 60000)] * 3 + [b"0\r\n\r\n"]
        assert refused_status(running.hooks_port, head + b"Transfer-Encoding: chunked\r\n\r\n", chunked) == 413
        declared = head + b"Content-Length: 100001\r\n\r\n"
        assert refused_status(running.hooks_port, declared, [b"x" * 100001]) == 413
        assert not Delivery.objects.exists()
    finally:
        running.stop()


@pytest.fixture
def slow_app():
    """Another app that takes a moment to answer, so that the worker is killed in the middle of runs."""
    with serving(slow_handler(0.3)) as url:
        yield url + "/slow"


def test_a_worker_killed_mid_run_loses_nothing_and_completes_nothing_twice(stack, make_automation, slow_app):
    automation = make_automation(
        [
            {
                "id": "call",
                "kind": "http_request",
                "method": "POST",
                "url": slow_app,
                "json": {"n": "{{trigger.body.n}}"},
            },
            *RECORD,
        ],
        settings={"suppress_duplicates": False},
    )
    url = hook_url(stack, automation)
    accepted = []

    def send(n):
        response = post(url, {"n": n})
        if response.status_code == 200:
            accepted.append(response.headers["X-Flowgate-Delivery-Id"])

    for n in range(60):
        send(n)
        if n in (20, 40):
            # A run is waiting on the slow app (0.3 s): the kill lands in its middle.
            wait_until(
                lambda: Run.objects.filter(automation=automation, status="running").exists(),
                20,
                0.01,
                "a run in progress",
            )
            stack.kill("worker")  # SIGKILL in the middle of a run
            stack.start_worker()
    wait_until(lambda: settled(automation.pk, 60), 120, 0.5, "every accepted delivery to complete")
    assert len(accepted) == 60
    done = Delivery.objects.filter(automation=automation)
    assert {str(d.public_id) for d in done} == set(accepted)
    succeeded = Run.objects.filter(automation=automation, status="succeeded")
    assert succeeded.count() == 60  # exactly one successful run per delivery
    assert sorted(Delivery.objects.values_list("run_id", flat=True)) == sorted(succeeded.values_list("pk", flat=True))
    assert sorted(row.data["n"] for row in LookupRow.objects.all()) == list(range(60))
    # The kills did land mid-run: a run lost its worker, and was given back to another by the sweeper.
    lost = list(Run.objects.filter(lost_workers__gt=0).values_list("pk", "lost_workers", "status"))
    assert lost, stack.log("worker")[-3000:]


def test_a_stream_of_hostile_and_well_formed_webhooks_all_end_across_a_worker_kill(stack, make_automation, slow_app):
    """Issue 13: every input once stored but never run, mixed with ordinary webhooks, a worker killed mid-run."""
    automation = make_automation(
        [
            {
                "id": "call",
                "kind": "http_request",
                "method": "POST",
                "url": slow_app,
                "json": {"got": "{{trigger.body}}"},
            },
            *RECORD,
        ],
    )
    url = hook_url(stack, automation) + "?a=%00&b=%ED%A0%80&c=%FF"
    hostile = [(param.values[0], param.values[1]) for param in HOSTILE]
    stream = [(json.dumps({"n": n}).encode(), "application/json") for n in range(40)]
    for n, sent in enumerate(hostile * 2):  # each twice: the second is suppressed once the first succeeded, or runs
        stream.insert(2 * n + 1, sent)
    accepted = []
    for n, (body, content_type) in enumerate(stream):
        response = httpx.post(url, content=body, headers={"Content-Type": content_type}, timeout=30)
        assert response.status_code == 200, (n, response.status_code, response.text)
        accepted.append(response.headers["X-Flowgate-Delivery-Id"])
        if n == len(stream) // 2:
            wait_until(
                lambda: Run.objects.filter(automation=automation, status="running").exists(),
                20,
                0.01,
                "a run in progress",
            )
            stack.kill("worker")  # SIGKILL in the middle of a run
            stack.start_worker()

    def ended():
        states = Delivery.objects.filter(automation=automation).values_list("status", flat=True)
        return len(states) == len(stream) and set(states) <= {"done", "suppressed", "failed"}

    wait_until(ended, 180, 0.5, "every accepted delivery to end")
    deliveries = Delivery.objects.filter(automation=automation)
    assert {str(delivery.public_id) for delivery in deliveries} == set(accepted)
    assert not deliveries.filter(status="failed").exists(), list(deliveries.filter(status="failed").values("error"))
    wait_until(lambda: settled(automation.pk, len(stream)), 180, 0.5, "every run to end")
    done = deliveries.filter(status="done")
    succeeded = Run.objects.filter(automation=automation, status="succeeded")
    assert sorted(done.values_list("run_id", flat=True)) == sorted(succeeded.values_list("pk", flat=True))
    assert done.count() + deliveries.filter(status="suppressed").count() == len(stream)
    assert sorted(row.data["n"] for row in LookupRow.objects.exclude(data__n=None)) == list(range(40))


class PrivateRedis:
    """A Redis server of one test's own, on a free port, keeping nothing on disk: the broker the test kills."""

    def __init__(self, folder):
        self.port, self.folder, self.process = free_port(), folder, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([*command, "--dir", str(self.folder)], stdout=subprocess.DEVNULL)
        wait_until(self._answers, 10, 0.05, "the private Redis to answer")

    def kill(self) -> None:
        """SIGKILL: every message it held, queued or taken by a worker, is gone."""
        self.process.kill()
        self.process.wait()

    def _answers(self) -> bool:
        try:
            return redis.Redis(port=self.port, socket_timeout=1).ping()
        except redis.ConnectionError:
            return False


@pytest.fixture
def private_redis(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("no redis-server on this machine")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    if server.process.poll() is None:
        server.kill()


def test_a_broker_killed_and_restarted_while_webhooks_arrive_loses_no_accepted_delivery(
    tmp_path, make_automation, private_redis
):
    """Contract 1 across a broker restart: the messages of every delivery queued or being run are lost with it, and
    those accepted while it is down never had one; the sweeper queues them all once it is back."""
    running = Stack(
        tmp_path, REDIS_URL=private_redis.url, RUN_SWEEP_SECONDS="1", DELIVERY_SWEEP_SECONDS="1", RUN_LEASE_SECONDS="6"
    )
    running.start_web(hooks_process=True)
    running.start_worker()
    running.start_beat()
    try:
        automation = make_automation(RECORD)
        url = hook_url(running, automation)
        accepted = []
        for n in range(40):
            if n == 15:
                private_redis.kill()
            if n == 25:
                private_redis.start()
            if post(url, {"n": n}).status_code == 200:
                accepted.append(n)
        assert accepted == list(range(40))  # a 200 waits for the database alone, not for the broker
        wait_until(lambda: settled(automation.pk, len(accepted)), 120, 0.5, "every accepted delivery to run")
        assert sorted(row.data["n"] for row in LookupRow.objects.all()) == accepted  # each once
        assert Run.objects.filter(status="succeeded").count() == len(accepted)
    finally:
        running.stop()
