"""Approvals in Chromium against gunicorn, a Celery worker and beat: one item approved, another rejected, each run
going on with its decision; the queue at a phone's width. Screenshots in tests/artifacts/."""

from urllib.parse import urlsplit

import pytest

from automations.models import LookupRow, Run
from interfaces.approvals import queues
from interfaces.models import ApprovalItem, ApprovalQueue
from interfaces.tests.support import ASK_THEN_RECORD
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack, wait_until
from tests.e2e.test_approvals import send

pytestmark = END_TO_END


@pytest.fixture
def stack(tmp_path, browser):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def queue_url(stack, automation) -> str:
    parts = urlsplit(queues.approval_url(ApprovalQueue.objects.get(automation=automation)))
    return f"{stack.base}{parts.path}?{parts.query}"


def item_card(page, title: str):
    return page.raw.get_by_role("listitem").filter(has=page.raw.get_by_role("heading", name=title))


def test_a_person_approves_one_item_and_rejects_another_in_the_browser(stack, page, make_automation):
    automation = make_automation(ASK_THEN_RECORD)
    send(stack, automation, {"order": 1, "customer": "Ada", "amount": 10})
    send(stack, automation, {"order": 2, "customer": "Bob", "amount": 99})
    wait_until(lambda: Run.objects.filter(status=Run.Status.WAITING).count() == 2, 60, message="2 runs to wait")
    url = queue_url(stack, automation)

    page.open(url, "queue-two-pending")
    first = item_card(page, "Refund order 1")
    assert first.get_by_text("Customer Ada asks for 10 EUR.").is_visible()
    first.get_by_label("Comment on “Refund order 1” (optional)").fill("fine")
    first.get_by_role("button", name="Approve").click()
    page.check("approved-one")
    assert page.raw.get_by_role("status").get_by_text("is recorded").is_visible()

    second = item_card(page, "Refund order 2")
    second.get_by_label("Comment on “Refund order 2” (optional)").fill("too much")
    second.get_by_role("button", name="Reject").click()
    page.check("rejected-another")
    assert page.raw.get_by_text("Nothing is waiting for a decision.").is_visible()
    assert item_card(page, "Refund order 1").get_by_text("approved", exact=True).is_visible()
    assert item_card(page, "Refund order 2").get_by_text("rejected", exact=True).is_visible()
    assert item_card(page, "Refund order 2").get_by_text("from 127.0.0.1").is_visible()

    wait_until(
        lambda: Run.objects.filter(status=Run.Status.SUCCEEDED).count() == 2,
        60,
        message=f"both runs to go on: {stack.log('worker')[-2000:]}",
    )
    assert sorted((row.data["order"], row.data["decision"]) for row in LookupRow.objects.all()) == [
        (1, "approved"),
        (2, "rejected"),
    ]
    decided = {item.details["order"]: (item.decision, item.comment) for item in ApprovalItem.objects.all()}
    assert decided == {1: ("approved", "fine"), 2: ("rejected", "too much")}


def test_a_decision_from_a_tab_opened_before_another_approver_decided_shows_the_first_outcome(
    stack, page, make_automation
):
    automation = make_automation(ASK_THEN_RECORD)
    send(stack, automation, {"order": 3, "customer": "Eve", "amount": 5})
    wait_until(lambda: ApprovalItem.objects.filter(queue__automation=automation).exists(), 60, message="its item")
    page.open(queue_url(stack, automation), "queue-before")
    item = ApprovalItem.objects.get()
    queues.decide(queue=item.queue, item_id=item.pk, decision="rejected", comment="", address="192.0.2.5")
    item_card(page, "Refund order 3").get_by_role("button", name="Approve").click()
    page.check("already-decided")
    assert page.raw.get_by_role("alert").get_by_text("was already decided").is_visible()
    item.refresh_from_db()
    assert item.decision == "rejected"


def test_the_queue_fits_a_phone(stack, phone_page, make_automation):
    automation = make_automation(ASK_THEN_RECORD)
    send(stack, automation, {"order": 4, "customer": "A name long enough to wrap on a phone's narrow screen"})
    wait_until(lambda: ApprovalItem.objects.filter(queue__automation=automation).exists(), 60, message="its item")
    phone_page.open(queue_url(stack, automation), "queue-on-a-phone")
    assert_fits_the_screen(phone_page)
