"""Execution History for owners: runs newest first, page after page, one run's data and steps, and its retry."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from automations import runs
from automations.models import Run
from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def a_run(automation, status=Run.Status.FAILED, **fields) -> Run:
    defaults = {"trigger": {"body": {"order": 7}}, "steps": [{"id": "call", "kind": "respond", "status": "failed"}]}
    fields = {"source": "webhook", **defaults, **fields}
    return Run.objects.create(automation=automation, status=status, **fields)


# Failure paths first.


def test_another_owners_run_is_a_404_and_cannot_be_retried(signed_in, make_automation, another_account):
    run = a_run(make_automation(user=another_account))
    assert signed_in.get(reverse("account-run", args=[run.pk])).status_code == 404
    assert signed_in.post(reverse("account-retry", args=[run.pk])).status_code == 404
    assert Run.objects.count() == 1


@pytest.mark.parametrize("before", ["x", "-1", "²", "9" * 19, "1.5"])
def test_a_page_asked_with_a_cursor_that_is_no_number_is_a_404(signed_in, make_automation, before):
    automation = make_automation()
    assert signed_in.get(reverse("account-runs", args=[automation.pk]), {"before": before}).status_code == 404


def test_a_cursor_naming_another_automations_run_gives_an_empty_page(signed_in, make_automation):
    mine, other = make_automation(name="a"), make_automation(name="b")
    a_run(mine)
    foreign = a_run(other)
    response = signed_in.get(reverse("account-runs", args=[mine.pk]), {"before": foreign.pk})
    assert response.status_code == 200 and "No older run." in response.content.decode()


@pytest.mark.parametrize("status", [Run.Status.SUCCEEDED, Run.Status.WAITING, Run.Status.RUNNING, Run.Status.STOPPED])
def test_only_a_failed_or_abandoned_run_is_retried(make_automation, status):
    run = a_run(make_automation(), status=status)
    with pytest.raises(runs.NotRetried):
        runs.retry_by_hand(run_id=run.pk, automation_id=run.automation_id)


def test_a_run_that_failed_before_its_first_step_has_nothing_to_retry(make_automation):
    run = a_run(make_automation(), trigger={}, steps=[])
    with pytest.raises(runs.NotRetried, match="before its first step"):
        runs.retry_by_hand(run_id=run.pk, automation_id=run.automation_id)


def test_a_retried_run_is_not_retried_twice(signed_in, make_automation):
    run = a_run(make_automation(enabled=False))
    signed_in.post(reverse("account-retry", args=[run.pk]))
    response = signed_in.post(reverse("account-retry", args=[run.pk]), follow=True)
    assert "a later attempt of this run exists" in response.content.decode()
    assert Run.objects.filter(retry_of=run).count() == 1


def test_a_run_with_an_automatic_retry_queued_is_not_retried_by_hand_too(make_automation):
    automation = make_automation(enabled=False)
    first = a_run(automation)
    a_run(automation, status=Run.Status.WAITING, attempt=2, retry_of=first)
    with pytest.raises(runs.NotRetried):
        runs.retry_by_hand(run_id=first.pk, automation_id=automation.pk)


# What works.


def test_a_retry_runs_the_same_trigger_data_again_as_the_next_attempt(
    signed_in, make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    automation = make_automation([{"id": "echo", "kind": "set_values", "values": {"order": "{{trigger.body.order}}"}}])
    failed = a_run(automation)
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(reverse("account-retry", args=[failed.pk]))
    again = Run.objects.get(retry_of=failed)
    assert response["Location"] == reverse("account-run", args=[again.pk])
    assert (again.status, again.attempt, again.trigger) == (Run.Status.SUCCEEDED, 2, failed.trigger)
    assert again.steps[0]["output"] == {"order": 7}


def test_a_retry_of_a_delivery_waits_while_the_automation_is_off(
    signed_in, make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    automation = make_automation([{"id": "answer", "kind": "respond"}], enabled=False)
    failed = a_run(automation)
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(reverse("account-retry", args=[failed.pk]), follow=True)
    assert "starts when the automation is turned on" in response.content.decode()
    assert Run.objects.get(retry_of=failed).status == Run.Status.WAITING


def test_runs_come_newest_first_page_after_page_without_a_gap_or_a_repeat(signed_in, make_automation, monkeypatch):
    from accounts import owned

    monkeypatch.setattr(owned, "RUNS_PER_PAGE", 3)
    automation = make_automation()
    same_time = timezone.now()
    made = [a_run(automation, status=Run.Status.SUCCEEDED) for _ in range(8)]
    # Several runs started in the same microsecond: the id breaks the tie.
    Run.objects.filter(pk__in=[run.pk for run in made[2:6]]).update(started_at=same_time)
    Run.objects.filter(pk__in=[run.pk for run in made[6:]]).update(started_at=same_time + timedelta(seconds=1))
    seen, before = [], None
    for _ in range(5):
        page = owned.runs_page(automation, before=before)
        seen += [run.pk for run in page.runs]
        if page.older_than is None:
            break
        before = page.older_than
    expected = list(
        Run.objects.filter(automation=automation).order_by("-started_at", "-pk").values_list("pk", flat=True)
    )
    assert seen == expected and len(seen) == 8
    html = signed_in.get(reverse("account-runs", args=[automation.pk])).content.decode()
    assert html.count('href="/account/runs/') == 3 and "Older runs" in html


def test_a_run_page_shows_its_trigger_data_steps_and_error_with_bidi_controls_escaped(signed_in, make_automation):
    run = a_run(
        make_automation(),
        trigger={"body": {"note": "refund \u202eevil"}},
        steps=[{"id": "call", "kind": "http_request", "status": "failed", "output": {"x": 1}, "error": "timed out"}],
        error="step call: timed out",
    )
    html = signed_in.get(reverse("account-run", args=[run.pk])).content.decode()
    assert "refund \\u202eevil" in html and "\u202e" not in html
    assert "timed out" in html and "&quot;x&quot;: 1" in html
    assert f'action="/account/runs/{run.pk}/retry"' in html


def test_a_waiting_run_shows_what_it_waits_for(signed_in, make_automation):
    from interfaces.tests.support import ASK_THEN_RECORD, deliver

    run = deliver(make_automation(ASK_THEN_RECORD))
    assert run.status == Run.Status.WAITING
    html = signed_in.get(reverse("account-run", args=[run.pk])).content.decode()
    assert "Waiting for" in html and "Refund order 7" in html


def test_deliveries_kept_while_off_are_listed_above_the_runs(signed_in, make_automation):
    automation = make_automation(enabled=False)
    for _ in range(3):
        hook_services.accept_delivery(
            automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", "", "application/json", b"{}")
        )
    assert Delivery.objects.filter(automation=automation, status="pending").count() == 3
    html = signed_in.get(reverse("account-runs", args=[automation.pk])).content.decode()
    assert "3 deliveries wait for the automation to be turned on" in html


@pytest.mark.parametrize("source", ["web_service", "form", "chat"])
def test_a_run_whose_starter_waited_for_its_answer_is_not_retried_and_the_page_says_why(
    signed_in, make_automation, source
):
    run = a_run(make_automation(), source=source)
    with pytest.raises(runs.NotRetried, match="only a webhook's run"):
        runs.retry_by_hand(run_id=run.pk, automation_id=run.automation_id)
    html = signed_in.get(reverse("account-run", args=[run.pk])).content.decode()
    assert "Not retried by hand" in html and "/retry" not in html


def test_a_run_that_acted_on_a_persons_answer_is_not_retried(make_automation):
    steps = [{"id": "ask", "kind": "approval", "status": "succeeded", "waited_for": {"kind": "approval"}}]
    run = a_run(make_automation(), steps=steps)
    with pytest.raises(runs.NotRetried, match="person's answer"):
        runs.retry_by_hand(run_id=run.pk, automation_id=run.automation_id)


def test_a_retry_keeps_the_key_its_url_carried(make_automation):
    from publickeys.models import PublicKey

    automation = make_automation(enabled=False)
    key = PublicKey.objects.filter(target_id=automation.pk, purpose="webhook").first()
    run = a_run(automation, trigger_key=key)
    assert runs.retry_by_hand(run_id=run.pk, automation_id=automation.pk).trigger_key_id == key.pk


def test_what_started_a_run_is_named_in_the_owners_language(signed_in, make_automation):
    automation = make_automation()
    run = a_run(automation, source=Run.Source.FORM)
    german = {"HTTP_ACCEPT_LANGUAGE": "de"}
    assert "gehostetes Formular" in signed_in.get(reverse("account-run", args=[run.pk]), **german).content.decode()
    listed = signed_in.get(reverse("account-runs", args=[automation.pk]), **german).content.decode()
    assert "gehostetes Formular" in listed
