"""Writes of form pages: a hosted form's submission starts a run, a person's form answers the run's wait."""

from django.db import transaction
from django.utils import timezone

from automations import runs
from automations.models import Automation, Run
from interfaces import uploads
from interfaces.fields import FieldForm
from publickeys import services as key_services
from publickeys.models import PublicKey


def answers_with_files(*, automation: Automation, form: FieldForm) -> dict:
    """The form's answers, each file field's files kept (interfaces/uploads.py) and given as name, size, type, link."""
    answers = form.answers()
    for field in form.definition:
        if field["type"] == "file" and field["name"] in answers:
            answers[field["name"]] = uploads.store(
                automation=automation, field=field["name"], files=answers[field["name"]]
            )
    return answers


@transaction.atomic
def submit_form(*, automation: Automation, answers: dict, user=None) -> tuple[Run, str]:
    """Start a run of the hosted form's automation, in a worker; the run, and its session page's key in clear.

    The run is queued (automations.runs.queue), never run in the web
    request: a visitor's submission is accepted once the run is committed.
    The run and its session key commit together, so that a failure leaves
    no run the visitor was not sent to, and the page can be sent again.
    """
    trigger = {
        "body": answers,
        "form": {
            "submitted_at": timezone.now().isoformat(),
            "user": user.get_username() if user is not None and user.is_authenticated else None,
        },
    }
    run = runs.queue(automation=automation, trigger=trigger, source=Run.Source.FORM)
    return run, key_services.issue_key(purpose=PublicKey.Purpose.FORM_SESSION, target=run)


@transaction.atomic
def answer_session_form(*, run: Run, step: str, answers: dict) -> bool:
    """The session visitor's answer to the run's form step; False when it was answered already or waits no more."""
    return runs.answer(run.pk, step=step, answer=answers)


@transaction.atomic
def answer_one_time_form(*, run: Run, answers: dict) -> bool:
    """Use the one-time link and answer the run's wait with it, both or neither: the first POST wins.

    The key is retired in the same transaction, so that the link then
    answers as one never issued. Of two POSTs racing, the second waits for
    the first's row lock and then finds the key retired: False.
    """
    waiting_for = run.waiting_for or {}
    used = PublicKey.objects.filter(pk=waiting_for.get("public_key_id"), retired_at__isnull=True).update(
        retired_at=timezone.now(), sealed=""
    )
    if not used or not runs.answer(run.pk, step=waiting_for.get("step"), answer=answers):
        transaction.set_rollback(True)
        return False
    return True
