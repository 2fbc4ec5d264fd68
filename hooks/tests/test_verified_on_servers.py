"""Verified webhook URLs through a real hooks process (config/asgi.py on edge/asgi_worker.py), over HTTP."""

import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings
from django.db import connection

from automations import services as automation_services
from hooks import signatures, verification
from hooks.models import Delivery, Refusal
from tests.e2e.stack import Stack

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor != "postgresql",
        reason="a real hooks process runs on PostgreSQL and Redis",
    ),
]
SECRET = verification.new_standard_secret()
BODY = b'{"n": 1}'


@pytest.fixture(scope="module")
def hooks_process(tmp_path_factory, django_db_setup):
    running = Stack(tmp_path_factory.mktemp("hooks"))
    running.start_web(hooks_process=True)
    yield running
    running.stop()


@pytest.fixture
def url(hooks_process, make_automation):
    automation = make_automation([])
    verification.save(
        automation_id=automation.pk,
        scheme=signatures.STANDARD,
        tolerance_seconds=300,
        new_secret=SECRET,
        allowed_networks=[],
    )
    return hooks_process.base + urlsplit(automation_services.hook_url(automation)).path


def signed(webhook_id: str, at: int | None = None) -> dict:
    at = int(time.time()) if at is None else at
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(at),
        "webhook-signature": signatures.sign_standard(SECRET, webhook_id, at, BODY),
        "content-type": "application/json",
    }


def test_a_signed_webhook_is_accepted_and_its_replay_stale_and_forged_twins_refused(url):
    assert httpx.post(url, content=BODY, headers=signed("msg_1")).status_code == 200
    assert httpx.post(url, content=BODY, headers=signed("msg_1")).status_code == 401  # replayed
    assert httpx.post(url, content=BODY, headers=signed("msg_2", int(time.time()) - 600)).status_code == 401
    forged = {**signed("msg_3"), "webhook-signature": "v1," + "A" * 43 + "="}
    assert httpx.post(url, content=BODY, headers=forged).status_code == 401
    assert Delivery.objects.count() == 1
    assert sorted(Refusal.objects.values_list("reason", flat=True)) == ["replayed", "signature", "timestamp"]


def test_concurrent_replays_of_one_webhook_id_store_it_once(url):
    with httpx.Client() as client, ThreadPoolExecutor(8) as pool:
        statuses = list(
            pool.map(lambda _: client.post(url, content=BODY, headers=signed("msg_once")).status_code, range(16))
        )
    assert sorted(statuses) == [200] + [401] * 15
    assert Delivery.objects.count() == 1


def test_the_handshakes_still_answer_unsigned(url):
    response = httpx.post(url, headers={"X-Hook-Secret": "abc"})
    assert (response.status_code, response.headers["X-Hook-Secret"]) == (200, "abc")
    assert not Delivery.objects.exists()
