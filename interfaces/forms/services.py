"""Writes of form pages: a hosted form's submission starts a run, a person's form answers the run's wait."""

from django.db import transaction
from django.utils import timezone

from automations import runs
from automations.models import Automation, Run
from interfaces.forms import uploads
from interfaces.forms.fields import FieldForm
from publickeys import services as key_services
from publickeys.models import PublicKey


def _with_files(automation: Automation, form: FieldForm, answer):
    """answer(answers) with the form's files: saved before the transaction (no lock is held while they are copied),
    recorded in it. When answer returns something false, or anything fails before the commit, the transaction
    rolls back and the saved files are removed, so that a lost race or an error leaves no file behind."""
    answers = form.answers()
    saved = {
        field["name"]: uploads.save(automation=automation, files=answers[field["name"]])
        for field in form.definition
        if field["type"] == "file" and field["name"] in answers
    }
    every_file = [one for files in saved.values() for one in files]
    try:
        with transaction.atomic():
            for name, files in saved.items():
                answers[name] = uploads.record(automation=automation, field=name, saved=files)
            answered = answer(answers)
            if not answered:
                transaction.set_rollback(True)
    except BaseException:
        if not uploads.recorded(every_file):  # raised after the commit (by an on_commit hook): the files stay
            uploads.remove(every_file)
        raise
    if not answered:
        uploads.remove(every_file)
    return answered


def submit_form(*, automation: Automation, form: FieldForm, user=None) -> tuple[Run, str]:
    """Start a run of the hosted form's automation, in a worker; the run, and its session page's key in clear.

    The run is queued (automations.runs.queue), never run in the web
    request: a visitor's submission is accepted once the run is committed.
    The run and its session key commit together, so that a failure leaves
    no run the visitor was not sent to, and the page can be sent again.
    """
    return _with_files(automation, form, lambda answers: _start(automation, answers, user))


def _start(automation: Automation, answers: dict, user) -> tuple[Run, str]:
    trigger = {
        "body": answers,
        "form": {
            "submitted_at": timezone.now().isoformat(),
            "user": user.get_username() if user is not None and user.is_authenticated else None,
        },
    }
    run = runs.queue(automation=automation, trigger=trigger, source=Run.Source.FORM)
    return run, key_services.issue_key(purpose=PublicKey.Purpose.FORM_SESSION, target=run)


def answer_session_form(*, run: Run, step: str, form: FieldForm) -> bool:
    """The session visitor's answer to the run's form step; False when it was answered already or waits no more."""
    return _with_files(run.automation, form, lambda answers: runs.answer(run.pk, step=step, answer=answers))


def answer_one_time_form(*, run: Run, form: FieldForm) -> bool:
    """Use the one-time link and answer the run's wait with it, both or neither: the first POST wins.

    The key is retired in the same transaction, so that the link then
    answers as one never issued. Of two POSTs racing, the second waits for
    the first's row lock and then finds the key retired: False.
    """
    return _with_files(run.automation, form, lambda answers: _use_link_and_answer(run, answers))


def _use_link_and_answer(run: Run, answers: dict) -> bool:
    waiting_for = run.waiting_for or {}
    used = key_services.use_key(waiting_for.get("public_key_id"))
    return used and runs.answer(run.pk, step=waiting_for.get("step"), answer=answers)
