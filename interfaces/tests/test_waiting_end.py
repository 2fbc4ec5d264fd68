"""After Processing > Reset or deletion, an approval item is no longer pending and the link says so."""

import pytest

from automations import services
from automations.models import Run
from interfaces import approvals
from interfaces.models import ApprovalItem, ApprovalQueue
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db


def test_after_a_reset_the_item_is_closed_and_its_decision_refused(client, queue_path, waiting_run):
    automation = waiting_run.automation
    services.turn_off(automation=automation)
    services.reset(automation=automation)
    waiting_run.refresh_from_db()
    assert waiting_run.status == Run.Status.FAILED
    item = ApprovalItem.objects.get()
    page = client.get(queue_path)
    assert page.status_code == 200 and "Nothing is waiting for a decision" in page.content.decode()
    response = client.post(queue_path, {"item": item.pk, "decision": "approve"})
    assert response.status_code == 409 and "can no longer be decided" in response.content.decode()
    item.refresh_from_db()
    assert item.decision == ""


def test_after_deletion_the_approval_link_shows_the_unavailable_page(client, queue_path, waiting_run):
    never_issued = client.get("/moderation?queue=never-issued")
    services.delete_automation(automation=waiting_run.automation)
    assert not ApprovalQueue.objects.exists() and not ApprovalItem.objects.exists()
    assert not PublicKey.objects.filter(purpose=PublicKey.Purpose.APPROVAL_QUEUE).exists()
    for response in (client.get(queue_path), client.post(queue_path, {"item": 1, "decision": "approve"})):
        assert response.status_code == 404
        assert response.content == never_issued.content


def test_turning_the_automation_off_leaves_the_item_pending(client, queue_path, waiting_run):
    services.turn_off(automation=waiting_run.automation)
    pending, _ = approvals.items_of(ApprovalQueue.objects.get())
    assert [view.state for view in pending] == ["pending"]
