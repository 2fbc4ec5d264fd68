"""After Processing > Reset or deletion, an approval item is no longer pending and the link says so."""

import pytest

from automations import services
from automations.models import Run
from interfaces.approvals import queues
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
    pending, _ = queues.items_of(ApprovalQueue.objects.get())
    assert [view.state for view in pending] == ["pending"]


def _unavailable_alike(client, ended_path: str, never_issued_path: str) -> None:
    from interfaces.forms.tests.test_session_page import page

    ended, never = client.get(ended_path), client.get(never_issued_path)
    assert ended.status_code == never.status_code == 404
    assert page(ended) == page(never)


def test_after_a_reset_a_session_page_and_a_one_time_link_show_the_unavailable_page(
    client, make_form, make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    from django.core import mail

    from automations import runs
    from interfaces.forms import spam
    from interfaces.forms.tests.test_one_time_form import AFTER, ASK, link_path
    from interfaces.forms.tests.test_session_page import TWO_FORMS
    from interfaces.tests.support import form_path, shown_token

    hosted = make_form(TWO_FORMS)
    path = form_path(hosted)
    data = {spam.SHOWN: shown_token(client, path), "email": "ada@example.com", "topic": "sales"}
    with django_capture_on_commit_callbacks(execute=True):
        session = path.rsplit("/", 1)[0] + "/" + client.post(path, data)["Location"]
    assert b"Your size" in client.get(session).content
    mailed = make_automation([ASK, AFTER], name="One-time")
    with django_capture_on_commit_callbacks(execute=True):
        runs.queue(automation=mailed, trigger={"body": {}}, source="webhook")
    one_time = link_path(mail.outbox[-1])
    assert client.get(one_time).status_code == 200
    for automation in (hosted, mailed):
        services.turn_off(automation=automation)
        services.reset(automation=automation)
    assert set(Run.objects.values_list("status", flat=True)) == {Run.Status.FAILED}
    _unavailable_alike(client, session, "/form/run/" + "A" * 32)
    _unavailable_alike(client, one_time, "/form/s/" + "A" * 32)
