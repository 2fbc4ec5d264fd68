"""Runs that wait, end to end: a delay across a worker killed and restarted, resumed by beat, each run once."""

import json
from urllib.parse import urlsplit

import httpx
import pytest

from automations import services as automation_services
from automations.models import LookupRow, Run
from hooks.models import Delivery
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

DELAY_SECONDS = 3
WAIT_THEN_RECORD = [
    {"id": "pause", "kind": "delay", "seconds": DELAY_SECONDS},
    {"id": "row", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": "{{trigger.body.n}}"}},
]


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1", DELIVERY_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def test_delayed_runs_go_on_after_their_worker_was_killed_and_each_completes_once(stack, make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    url = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    for n in range(5):
        response = httpx.post(
            url, content=json.dumps({"n": n}).encode(), headers={"Content-Type": "application/json"}, timeout=30
        )
        assert response.status_code == 200
    wait_until(lambda: Run.objects.filter(status=Run.Status.WAITING).count() == 5, 60, message="5 runs to wait")
    assert set(Delivery.objects.values_list("status", flat=True)) == {"done"}  # done once their run waits
    # The worker holds the resume tasks queued for each run's time; SIGKILL loses them with it.
    stack.kill("worker")
    stack.start_worker()

    def all_succeeded():
        return Run.objects.filter(status=Run.Status.SUCCEEDED).count() == 5

    wait_until(all_succeeded, 90, message=f"5 runs to go on: {stack.log('worker')[-2000:]}")
    assert Run.objects.count() == 5
    assert sorted(row.data["n"] for row in LookupRow.objects.all()) == list(range(5))
    for run in Run.objects.all():
        waited = run.steps[0]
        assert waited["status"] == "succeeded" and run.finished_at.isoformat() >= waited["output"]["waited_until"]
