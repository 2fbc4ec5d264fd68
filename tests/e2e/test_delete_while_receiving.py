"""Deleting an automation right after a webhook, end to end: gunicorn and a real Celery worker on PostgreSQL and Redis.

Before the delete waited for runs being started, 5 to 12 deletes in 50 failed
on a run the worker committed meanwhile, and the automation lived on.
"""

from urllib.parse import urlsplit

import httpx

from automations import services as automation_services
from automations.models import Automation, LookupRow, Run
from hooks.models import Delivery
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

ROUNDS = 40
STEPS = [{"id": "who", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}]


def post(url: str, n: int) -> int:
    response = httpx.post(url, content=b'{"n": %d}' % n, headers={"Content-Type": "application/json"}, timeout=30)
    return response.status_code


def test_an_automation_deleted_right_after_a_webhook_is_gone_every_time(tmp_path, make_automation):
    stack = Stack(tmp_path)
    stack.start_web()
    stack.start_worker()
    try:
        for n in range(ROUNDS):
            automation = make_automation(STEPS, name=f"round {n}")
            url = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
            assert post(url, n) == 200
            automation_services.delete_automation(automation=automation)  # at once: its run is being started
            assert not Automation.objects.filter(pk=automation.pk).exists()
            assert post(url, n) == 404
        last = make_automation(STEPS, name="after the rounds")
        assert post(stack.hooks + urlsplit(automation_services.hook_url(last)).path, 0) == 200
        wait_until(lambda: Delivery.objects.filter(automation=last, status="done").exists(), 60, message="a last run")
    finally:
        stack.stop()
    for model in (Delivery, Run, LookupRow):
        assert not model.objects.exclude(automation=last).exists(), f"{model.__name__} rows outlived their automation"
    assert "Traceback" not in stack.log("worker")  # a worker whose automation is gone ends quietly
