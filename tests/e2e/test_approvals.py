"""Approvals end to end: gunicorn, a real Celery worker and beat on PostgreSQL and Redis.

A person approves one item and rejects another on the page, each run goes
on with its decision; items nobody decides expire, each with its outcome.
"""

import json
import re
from urllib.parse import urlsplit

import httpx
import pytest

from automations import services as automation_services
from automations.models import LookupRow, Run
from interfaces.approvals import queues
from interfaces.models import ApprovalItem, ApprovalQueue
from interfaces.tests.support import ASK_THEN_RECORD, steps_with
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1", DELIVERY_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def send(stack, automation, body: dict) -> None:
    url = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    response = httpx.post(url, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200


def page_url(stack, automation) -> str:
    parts = urlsplit(queues.approval_url(ApprovalQueue.objects.get(automation=automation)))
    return f"{stack.base}{parts.path}?{parts.query}"


def decide(browser: httpx.Client, url: str, shown: str, item: ApprovalItem, decision: str, comment: str):
    """Submit the item's form on the page the browser shows (opened earlier, it may still offer a decided item)."""
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown).group(1)
    form = {"csrfmiddlewaretoken": token, "item": str(item.pk), "decision": decision, "comment": comment}
    return browser.post(url, data=form, follow_redirects=True)  # a decision answers 303 to the page, as a browser


def test_a_person_approves_one_item_and_rejects_another_and_each_run_goes_on_with_its_decision(stack, make_automation):
    automation = make_automation(ASK_THEN_RECORD)
    send(stack, automation, {"order": 1, "customer": "Ada", "amount": 10})
    send(stack, automation, {"order": 2, "customer": "Bob", "amount": 99})
    # This automation's own runs and items: a run of the test before may still be settling in the same database.
    waiting = Run.objects.filter(automation=automation, status=Run.Status.WAITING)
    items = ApprovalItem.objects.filter(run__automation=automation)
    wait_until(lambda: waiting.count() == 2 and items.count() == 2, 60, message="2 runs to wait, each with its item")
    first, second = items.order_by("details__order")
    url = page_url(stack, automation)
    with httpx.Client() as browser:
        shown = browser.get(url)
        assert shown.status_code == 200 and "Refund order 1" in shown.text and "Refund order 2" in shown.text
        assert decide(browser, url, shown.text, first, "approve", "fine").status_code == 200
        assert decide(browser, url, shown.text, second, "reject", "too much").status_code == 200
        again = decide(browser, url, shown.text, second, "approve", "")
        assert again.status_code == 409 and "was already decided" in again.text

    def both_done():
        return Run.objects.filter(status=Run.Status.SUCCEEDED).count() == 2

    wait_until(both_done, 60, message=f"both runs to go on: {stack.log('worker')[-2000:]}")
    assert sorted((row.data["order"], row.data["decision"]) for row in LookupRow.objects.all()) == [
        (1, "approved"),
        (2, "rejected"),
    ]
    outputs = {run.trigger["body"]["order"]: run.steps[0]["output"] for run in Run.objects.all()}
    assert outputs[1]["comment"] == "fine" and outputs[2]["comment"] == "too much"
    with httpx.Client() as browser:
        later = browser.get(url).text
    assert "Nothing is waiting for a decision" in later and "from 127.0.0.1" in later


def test_items_nobody_decides_expire_with_each_outcome_through_the_worker_and_beat(stack, make_automation):
    failing = make_automation(steps_with(expires_after=2), name="Expire and fail")
    going_on = make_automation(
        steps_with(expires_after=2, on_expiry={"continue_with": {"decision": "rejected", "comment": "no answer"}}),
        name="Expire and go on",
    )
    send(stack, failing, {"order": 1})
    send(stack, going_on, {"order": 2})

    def both_ended():
        return not Run.objects.filter(status__in=[Run.Status.WAITING, Run.Status.RUNNING]).exists() and (
            Run.objects.count() == 2
        )

    wait_until(both_ended, 90, message=f"both runs to expire: {stack.log('worker')[-2000:]}")
    failed = Run.objects.get(automation=failing)
    assert failed.status == Run.Status.FAILED and "expired" in failed.error
    went_on = Run.objects.get(automation=going_on)
    assert went_on.status == Run.Status.SUCCEEDED
    assert went_on.steps[0]["output"]["decision"] == "rejected"
    assert LookupRow.objects.get().data == {"order": 2, "decision": "rejected"}
    with httpx.Client() as browser:
        for automation in (failing, going_on):
            page = browser.get(page_url(stack, automation)).text
            assert "Nothing is waiting for a decision" in page and "expired" in page
