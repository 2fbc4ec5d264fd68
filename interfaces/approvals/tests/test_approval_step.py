"""The approval step: it puts an item in the automation's queue and waits; the decision is its output."""

from datetime import timedelta

import pytest
from django.utils import timezone

from automations import definition, runs
from automations.models import LookupRow, Run
from interfaces.approvals import queues
from interfaces.models import ApprovalItem, ApprovalQueue
from interfaces.tests.support import ASK_THEN_RECORD, deliver, steps_with
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db


def test_it_puts_an_item_with_its_filled_title_text_and_details_in_the_queue_and_waits(waiting_run):
    item = ApprovalItem.objects.get()
    assert (item.title, item.text) == ("Refund order 7", "Customer Ada asks for 30 EUR.")
    assert item.details == {"order": 7}
    assert item.run == waiting_run and item.queue.automation == waiting_run.automation
    assert waiting_run.status == Run.Status.WAITING and waiting_run.resume_at is None
    assert waiting_run.waiting_for["kind"] == "approval" and waiting_run.waiting_for["step"] == "ask"
    assert waiting_run.waiting_for["item_id"] == item.pk
    assert not LookupRow.objects.exists()


def test_waiting_for_keeps_the_queue_keys_id_never_the_key(waiting_run):
    key = PublicKey.objects.get(purpose=PublicKey.Purpose.APPROVAL_QUEUE)
    assert waiting_run.waiting_for["public_key_id"] == key.pk
    url = queues.approval_url(ApprovalQueue.objects.get())
    secret = url.split("queue=", 1)[1]
    assert secret not in str(waiting_run.waiting_for) and secret not in str(waiting_run.steps)


def test_one_queue_and_one_link_serve_every_run_of_the_automation(approval_automation):
    deliver(approval_automation, b'{"order": 1}')
    deliver(approval_automation, b'{"order": 2}')
    assert ApprovalQueue.objects.count() == 1
    assert PublicKey.objects.filter(purpose=PublicKey.Purpose.APPROVAL_QUEUE).count() == 1
    assert ApprovalItem.objects.count() == 2


@pytest.mark.parametrize("decision", ["approved", "rejected"])
def test_the_run_goes_on_with_the_decision_as_the_steps_output_and_a_rejection_is_no_failure(
    waiting_run, decision, eager_tasks, django_capture_on_commit_callbacks
):
    queue = ApprovalQueue.objects.get()
    item = ApprovalItem.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        outcome = queues.decide(queue=queue, item_id=item.pk, decision=decision, comment="ok", address="192.0.2.1")
    assert outcome is queues.Outcome.DECIDED
    waiting_run.refresh_from_db()
    assert waiting_run.status == Run.Status.SUCCEEDED
    output = waiting_run.steps[0]["output"]
    assert output["decision"] == decision and output["comment"] == "ok" and output["item_id"] == item.pk
    assert output["decided_at"]
    assert LookupRow.objects.get().data == {"order": 7, "decision": decision}


def test_a_condition_step_can_branch_on_a_rejection(make_automation, eager_tasks, django_capture_on_commit_callbacks):
    only_approved = {
        "id": "only_approved",
        "kind": "condition",
        "all": [{"left": "{{steps.ask.decision}}", "op": "equals", "right": "approved"}],
    }
    run = deliver(make_automation([ASK_THEN_RECORD[0], only_approved, ASK_THEN_RECORD[1]]))
    item = ApprovalItem.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        queues.decide(queue=item.queue, item_id=item.pk, decision="rejected", comment="", address=None)
    run.refresh_from_db()
    assert run.status == Run.Status.STOPPED
    assert not LookupRow.objects.exists()


def test_hostile_text_in_the_trigger_is_stored_cleaned(approval_automation):
    deliver(approval_automation, b'{"order": "a\\u0000b\\ud800", "customer": "x"}')
    item = ApprovalItem.objects.get()
    assert item.title == "Refund order a\ufffdb\ufffd"


def test_a_long_title_is_cut_to_what_the_queue_shows(make_automation):
    deliver(make_automation(steps_with(title="{{trigger.body.order}}")), ('{"order": "%s"}' % ("x" * 500)).encode())
    assert ApprovalItem.objects.get().title == "x" * 200


def test_the_definition_refuses_an_approval_without_a_title_or_with_a_bad_expiry():
    document = {"trigger": {"type": "webhook"}, "steps": [{"id": "ask", "kind": "approval", "text": "?"}]}
    assert any("title" in error for error in definition.errors(document))
    document["steps"][0].update(title="t", expires_after=-1)
    assert any("expires_after" in error for error in definition.errors(document))
    document["steps"][0].update(expires_after=60, on_expiry="maybe")
    assert definition.errors(document)
    document["steps"][0].update(on_expiry={"continue_with": {"decision": "rejected"}})
    assert definition.errors(document) == []


def test_an_item_with_an_expiry_carries_it_and_the_run_is_due_then(make_automation):
    run = deliver(make_automation(steps_with(expires_after=600)))
    item = ApprovalItem.objects.get()
    assert abs(item.expires_at - run.resume_at) < timedelta(seconds=1)
    assert timedelta(seconds=590) < run.resume_at - timezone.now() <= timedelta(seconds=600)
    assert run.waiting_for["expires_at"] == run.resume_at.isoformat()


@pytest.mark.parametrize(
    ("on_expiry", "status", "output"),
    [
        ("fail", Run.Status.FAILED, None),
        ({"continue_with": {"decision": "rejected", "comment": "timed out"}}, Run.Status.SUCCEEDED, "rejected"),
    ],
)
def test_an_item_nobody_decided_in_time_does_what_on_expiry_says_and_is_no_longer_pending(
    make_automation, on_expiry, status, output
):
    run = deliver(make_automation(steps_with(expires_after=600, on_expiry=on_expiry)))
    Run.objects.filter(pk=run.pk).update(resume_at=timezone.now() - timedelta(seconds=1))
    ApprovalItem.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert runs.resume(run.pk) is True
    run.refresh_from_db()
    assert run.status == status
    if output:
        assert run.steps[0]["output"]["decision"] == output
    else:
        assert "expired" in run.error
    item = ApprovalItem.objects.get()
    pending, closed = queues.items_of(item.queue)
    assert pending == [] and [view.state for view in closed] == ["expired"]
    outcome = queues.decide(queue=item.queue, item_id=item.pk, decision="approved", comment="", address=None)
    assert outcome is queues.Outcome.CLOSED


def test_execution_history_shows_what_a_run_waits_for_its_link_and_when_it_expires(staff_client, make_automation):
    run = deliver(make_automation(steps_with(expires_after=600)))
    url = queues.approval_url(ApprovalQueue.objects.get())
    listing = staff_client.get("/admin/automations/run/?waiting=person").content.decode()
    assert f"waiting: step ask (approval): Refund order 7, expires at {run.resume_at:%Y-%m-%d %H:%M:%S} UTC" in listing
    page = staff_client.get(f"/admin/automations/run/{run.pk}/change/").content.decode()
    assert f'href="{url}"' in page
    assert staff_client.get("/admin/automations/run/?waiting=time").context["cl"].result_count == 0
    assert staff_client.get("/admin/automations/run/?waiting=any").context["cl"].result_count == 1


def test_an_item_without_expiry_waits_until_answered_in_execution_history(staff_client, waiting_run):
    listing = staff_client.get("/admin/automations/run/?waiting=any").content.decode()
    assert "waiting: step ask (approval): Refund order 7, until answered" in listing


def test_the_approval_queue_admin_shows_the_link_and_the_items(staff_client, waiting_run):
    queue = ApprovalQueue.objects.get()
    page = staff_client.get(f"/admin/interfaces/approvalqueue/{queue.pk}/change/").content.decode()
    assert queues.approval_url(queue) in page and "Refund order 7" in page


def test_beats_sweeper_resumes_an_item_past_its_expiry(make_automation, eager_tasks):
    run = deliver(make_automation(steps_with(expires_after=600)))
    assert runs.sweep() == 0  # not due: its expiry is ten minutes away
    Run.objects.filter(pk=run.pk).update(resume_at=timezone.now() - timedelta(seconds=1))
    assert runs.sweep() == 1
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "expired" in run.error


def test_a_web_service_call_that_reaches_an_approval_gets_202_and_the_item_waits(approval_automation, client, settings):
    from automations import services as automation_services

    url = automation_services.web_service_url(approval_automation)
    response = client.post(url.removeprefix(settings.HOOKS_URL), b'{"order": 9}', content_type="application/json")
    run = Run.objects.get()
    assert (response.status_code, response.json()) == (202, {"status": "waiting", "run_id": run.pk})
    assert ApprovalItem.objects.get(run=run).title == "Refund order 9"


def test_details_longer_than_the_queue_shows_fail_the_step(make_automation):
    run = deliver(
        make_automation(steps_with(details={"all": "{{trigger.body.blob}}"})), b'{"blob": "' + b"x" * 30_000 + b'"}'
    )
    assert run.status == Run.Status.FAILED and "details are longer than" in run.error
    assert not ApprovalItem.objects.exists()


def test_the_queue_reads_a_bounded_number_of_items_however_long_its_history(make_automation, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    automation = make_automation(steps_with(expires_after=60))
    for order in range(6):
        deliver(automation, b'{"order": %d}' % order)
    ApprovalItem.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # all expired, none decided
    live = deliver(automation, b'{"order": 99}')
    monkeypatch.setattr(queues, "SHOWN_CLOSED", 2)
    with CaptureQueriesContext(connection) as queries:
        pending, closed = queues.items_of(ApprovalQueue.objects.get(automation=automation))
    assert [view.id for view in pending] == [live.waiting_for["item_id"]]
    assert len(closed) == 2 and {view.state for view in closed} == {"expired"}
    assert all(
        "LIMIT" in query["sql"] for query in queries.captured_queries if "interfaces_approvalitem" in query["sql"]
    )


@pytest.mark.parametrize("how", ["delete page", "delete selected"])
def test_deleting_a_queue_in_admin_ends_the_runs_waiting_on_its_items(
    staff_client, waiting_run, queue_path, client, how
):
    queue = ApprovalQueue.objects.get()
    if how == "delete page":
        staff_client.post(f"/admin/interfaces/approvalqueue/{queue.pk}/delete/", {"post": "yes"})
    else:
        staff_client.post(
            "/admin/interfaces/approvalqueue/",
            {"action": "delete_selected", "_selected_action": [queue.pk], "post": "yes"},
        )
    waiting_run.refresh_from_db()
    assert not ApprovalQueue.objects.exists()
    assert waiting_run.status == Run.Status.FAILED and "its approval queue was deleted" in waiting_run.error
    assert client.get(queue_path).status_code == 404


def test_deleting_a_queue_leaves_a_run_that_went_on_to_wait_for_something_else(staff_client, waiting_run):
    queue = ApprovalQueue.objects.get()
    Run.objects.filter(pk=waiting_run.pk).update(waiting_for={"step": "later", "kind": "delay"})  # its item is past
    staff_client.post(f"/admin/interfaces/approvalqueue/{queue.pk}/delete/", {"post": "yes"})
    waiting_run.refresh_from_db()
    assert not ApprovalQueue.objects.exists() and waiting_run.status == Run.Status.WAITING
