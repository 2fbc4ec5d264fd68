"""One-time forms /form/s/{key}: GET and HEAD never use the link up, the first valid POST does, and every link that
does not work (used, expired, of an ended run, never issued) shows the same unavailable page."""

import re
from pathlib import Path

import pytest
from django.core import mail
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from automations import runs
from automations.models import Run
from interfaces.forms import services
from interfaces.forms.fields import FieldForm
from interfaces.models import FormFile
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db

ASK = {
    "id": "ask",
    "kind": "form",
    "title": "Approve the refund?",
    "email": "boss@example.com",
    "fields": [{"name": "amount", "type": "number", "min": 0, "required": True}],
}
AFTER = {"id": "after", "kind": "set_values", "values": {"refund": "{{steps.ask.amount}}"}}


def page(response) -> bytes:
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", response.content)


@pytest.fixture
def start(make_automation, eager_tasks, django_capture_on_commit_callbacks):
    """Run an automation with these steps (a webhook run, in a worker) until it waits; returns the run."""

    def run_until_wait(steps=(ASK, AFTER)):
        automation = make_automation(list(steps))
        with django_capture_on_commit_callbacks(execute=True):
            run = runs.queue(automation=automation, trigger={"body": {}}, source="webhook")
        run.refresh_from_db()
        return run

    return run_until_wait


def link_path(message) -> str:
    return re.search(r"https?://[^/\s]+(/form/s/\S+)", message.body).group(1)


@pytest.fixture
def link(start):
    start()
    return link_path(mail.outbox[-1])


def test_the_step_mails_a_one_time_link_and_history_shows_the_wait_without_the_key(start):
    run = start()
    assert run.status == "waiting" and run.waiting_for["to"] == "link"
    assert run.waiting_for["email"] == "boss@example.com" and run.waiting_for["public_key_id"]
    message = mail.outbox[0]
    assert message.to == ["boss@example.com"] and "Approve the refund?" in message.subject
    key = link_path(message).rsplit("/", 1)[1]
    assert key not in str(run.waiting_for)


def test_get_and_head_show_the_form_and_never_use_the_link_up(client, link):
    for _ in range(2):
        response = client.get(link)
        assert response.status_code == 200 and b"Approve the refund?" in response.content
    assert client.head(link).status_code == 200
    assert Run.objects.get().status == "waiting"
    assert PublicKey.objects.get(purpose="one_time_form").retired_at is None


def test_an_invalid_post_shows_the_messages_and_keeps_the_link(client, link):
    response = client.post(link, {"amount": "-5"})
    assert response.status_code == 400 and b'value="-5"' in response.content
    assert client.get(link).status_code == 200


def test_the_first_valid_post_answers_the_run_and_the_link_then_shows_the_unavailable_page(
    client, link, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(link, {"amount": "12.5"})
    assert response.status_code == 200 and b"Thank you" in response.content
    run = Run.objects.get()
    assert run.status == "succeeded" and run.steps[1]["output"] == {"refund": 12.5}
    for again in (client.get(link), client.post(link, {"amount": "1"})):
        assert again.status_code == 404 and b"This form is not available" in again.content


def test_a_used_an_expired_an_ended_and_a_never_issued_link_answer_alike(
    client, start, django_capture_on_commit_callbacks
):
    start()
    used = link_path(mail.outbox[-1])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(used, {"amount": "1"})
    start([{**ASK, "expires_after": 0.001}, AFTER])
    expired = link_path(mail.outbox[-1])
    run = start()
    ended = link_path(mail.outbox[-1])
    Run.objects.filter(pk=run.pk).update(status="failed", waiting_for=None)  # as Reset or a failure ends it
    never = "/form/s/" + "A" * 32
    answers = [client.get(path) for path in (used, expired, ended, never)]
    assert {response.status_code for response in answers} == {404}
    assert len({page(response) for response in answers}) == 1
    # Expires is the moment of the answer (never cached), to the second: four answers may straddle one.
    headers = [{**response.headers, "Expires": "{now}"} for response in answers]
    assert all("Expires" in response.headers for response in answers)
    assert len({tuple(sorted(each.items())) for each in headers}) == 1


def test_a_link_of_an_earlier_wait_of_the_same_run_does_not_work(client, start, django_capture_on_commit_callbacks):
    start([ASK, {**ASK, "id": "again", "title": "And again?"}])
    first = link_path(mail.outbox[-1])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(first, {"amount": "1"})
    second = link_path(mail.outbox[-1])
    assert second != first and b"And again?" in client.get(second).content
    assert client.get(first).status_code == 404


def test_a_form_step_without_an_email_shows_its_link_in_execution_history(start, staff_client):
    run = start([NO_EMAIL])
    assert not mail.outbox and run.waiting_for["to"] == "link"
    page_html = staff_client.get(f"/admin/automations/run/{run.pk}/change/").content.decode()
    assert re.search(r"link: <a href=\"http://[^\"]+/form/s/[\w-]{20,}\"", page_html)


NO_EMAIL = {name: value for name, value in ASK.items() if name != "email"}


def test_a_step_for_the_session_visitor_fails_when_no_hosted_form_started_the_run(start):
    run = start([{**NO_EMAIL, "to": "session"}])
    assert run.status == "failed" and "this run has no form session" in run.error


def test_the_step_s_settings_are_checked_with_their_paths():
    from automations import definition

    step = {**ASK, "to": "session"}
    assert definition.errors({"trigger": {"type": "webhook"}, "steps": [step]}) == [
        "$.steps[0].email: a form for the session visitor is not mailed; use to: link"
    ]
    step = {"id": "ask", "kind": "form", "fields": [{"name": "a", "type": "file", "min": 1}], "expires_after": 0}
    assert definition.errors({"trigger": {"type": "webhook"}, "steps": [step]}) == [
        "$.steps[0].expires_after: 0 is less than or equal to the minimum of 0"
    ]


def test_of_two_answers_racing_with_files_the_loser_keeps_no_file(start, settings):

    ask = {**ASK, "fields": [{"name": "scan", "type": "file", "required": True}]}
    run = start((ask, AFTER))
    fields = run.waiting_for["form"]["fields"]

    def answer() -> bool:  # both passed the link's lookup with the same run, as two racing POSTs do
        form = FieldForm(fields, {}, {"scan": [SimpleUploadedFile("a.pdf", b"%PDF", content_type="application/pdf")]})
        assert form.is_valid(), form.errors
        return services.answer_one_time_form(run=run, form=form)

    assert [answer(), answer()] == [True, False]
    assert FormFile.objects.count() == 1
    folder = Path(settings.MEDIA_ROOT) / "forms" / str(run.automation_id)
    assert [path.name for path in folder.rglob("*") if path.is_file()] == ["a.pdf"]


def test_files_of_an_answer_that_fails_are_removed_with_it(start, settings, monkeypatch):

    ask = {**ASK, "fields": [{"name": "scan", "type": "file", "required": True}]}
    run = start((ask, AFTER))
    form = FieldForm(
        run.waiting_for["form"]["fields"],
        {},
        {"scan": [SimpleUploadedFile("a.pdf", b"%PDF", content_type="application/pdf")]},
    )
    assert form.is_valid()
    monkeypatch.setattr(runs, "answer", lambda *args, **kwargs: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        services.answer_one_time_form(run=run, form=form)
    assert not FormFile.objects.exists()
    assert not [path for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file()]
    assert PublicKey.objects.filter(pk=run.waiting_for["public_key_id"], retired_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_files_of_an_answer_committed_stay_when_an_after_commit_hook_raises(make_automation, eager_tasks, monkeypatch):

    ask = {**ASK, "fields": [{"name": "scan", "type": "file", "required": True}]}
    automation = make_automation([ask, AFTER])
    run = runs.queue(automation=automation, trigger={"body": {}}, source="webhook")
    run.refresh_from_db()
    form = FieldForm(
        run.waiting_for["form"]["fields"],
        {},
        {"scan": [SimpleUploadedFile("a.pdf", b"%PDF", content_type="application/pdf")]},
    )
    assert form.is_valid()
    answer = runs.answer

    def answer_then_fail_after_commit(*args, **kwargs):
        transaction.on_commit(lambda: (_ for _ in ()).throw(SystemExit("stopped after the commit")))
        return answer(*args, **kwargs)

    monkeypatch.setattr(runs, "answer", answer_then_fail_after_commit)
    with pytest.raises(SystemExit):
        services.answer_one_time_form(run=run, form=form)
    stored = FormFile.objects.get()
    assert default_storage.exists(stored.path)
