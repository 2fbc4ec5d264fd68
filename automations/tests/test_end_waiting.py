"""Processing > Reset and deletion end an automation's waiting runs; the runs of others and running ones go on."""

import pytest

from automations import runs, services
from automations.models import Run
from automations.tests.test_runs import WAIT_THEN_RECORD, deliver

pytestmark = pytest.mark.django_db


def test_reset_ends_the_waiting_runs_as_failed_with_the_reason(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    services.turn_off(automation=automation)
    services.reset(automation=automation)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.error == "ended while it waited: the automation was reset (Processing > Reset)"
    assert runs.ended_while_waiting(run)
    assert run.finished_at is not None and run.resume_at is None
    assert run.waiting_for["step"] == "pause"  # what it waited for stays in Execution History


def test_an_ended_run_can_no_longer_be_resumed_or_answered(make_automation):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    assert runs.end_waiting(automation_id=run.automation_id, reason="ended") == 1
    Run.objects.filter(pk=run.pk).update(resume_at=None)
    assert runs.answer(run.pk, step="pause", answer={"n": 1}) is False
    assert runs.resume(run.pk, early=True) is False
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.error == "ended while it waited: ended"


def test_a_run_already_resumed_is_not_ended_and_other_automations_runs_keep_waiting(make_automation):
    mine, other = make_automation(WAIT_THEN_RECORD), make_automation(WAIT_THEN_RECORD, name="Other")
    resumed, waiting = deliver(mine).run, deliver(other).run
    Run.objects.filter(pk=resumed.pk).update(status=Run.Status.RUNNING)
    assert runs.end_waiting(automation_id=mine.pk, reason="ended") == 0
    assert Run.objects.get(pk=resumed.pk).status == Run.Status.RUNNING
    assert Run.objects.get(pk=waiting.pk).status == Run.Status.WAITING


def test_a_refused_reset_ends_nothing(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    with pytest.raises(Exception, match="turn the automation off"):
        services.reset(automation=automation)
    run.refresh_from_db()
    assert run.status == Run.Status.WAITING


def test_deleting_the_automation_ends_its_waiting_runs_first(make_automation, monkeypatch):
    from automations import deletion

    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    seen = []
    real = deletion.turned_off

    def spy(automation_id):
        seen.append(Run.objects.filter(pk=run.pk).values_list("status", "error").first())
        return real(automation_id)

    monkeypatch.setattr(deletion, "turned_off", spy)
    services.delete_automation(automation=automation)
    assert seen[0] == (Run.Status.FAILED, "ended while it waited: the automation was deleted")
    assert not Run.objects.filter(pk=run.pk).exists()
