"""The form session page /form/run/{key}: follows its run through busy, each form it asks for, and its completion."""

import re

import pytest

from automations.models import Run
from interfaces.forms import spam
from interfaces.tests.support import form_path, shown_token

pytestmark = pytest.mark.django_db

TWO_FORMS = [
    {
        "id": "size",
        "kind": "form",
        "title": "Your size",
        "fields": [{"name": "size", "type": "select", "options": ["S", "M", "L"], "required": True}],
    },
    {"id": "note", "kind": "form", "title": "Anything else?", "fields": [{"name": "note", "type": "long_text"}]},
    {"id": "sum", "kind": "set_values", "values": {"order": "{{steps.size.size}} for {{trigger.body.email}}"}},
]


@pytest.fixture
def walk(client, make_form, eager_tasks, django_capture_on_commit_callbacks):
    """Submit the hosted form of an automation with these steps; returns the session page's path."""

    def start(steps=TWO_FORMS, *, run_steps=True, **trigger):
        path = form_path(make_form(steps, **trigger))
        data = {spam.SHOWN: shown_token(client, path), "email": "ada@example.com", "topic": "sales"}
        with django_capture_on_commit_callbacks(execute=run_steps):
            response = client.post(path, data)
        return path.rsplit("/", 1)[0] + "/" + response["Location"]

    return start


def page(response) -> bytes:
    """The page as a person reads it: the CSRF token is masked afresh on every response."""
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", response.content)


def post_step(client, path, capture, **data):
    page = client.get(path).content.decode()
    step = re.search(r'name="fg-step" value="([^"]+)"', page).group(1)
    with capture(execute=True):
        return client.post(path, {"fg-step": step, **data})


def refreshes_every(response) -> int:
    """The seconds after which the page reloads itself, for a browser without scripts only (session.js does better).

    A timed reload for every browser, a Refresh header or a bare meta refresh, would move the page under a
    screen reader's reading: it is inside <noscript>, which a browser with scripts does not read as markup.
    """
    assert "Refresh" not in response
    found = re.findall(rb'<noscript><meta http-equiv="refresh" content="(\d+)"></noscript>', response.content)
    assert len(found) == 1 and response.content.count(b'http-equiv="refresh"') == 1
    return int(found[0])


def test_a_never_issued_or_altered_session_key_shows_the_unavailable_page(client, walk):
    path = walk()
    for wrong in ("/form/run/nothing", path[:-2] + "zz", path + "x"):
        assert client.get(wrong).status_code == 404


def test_while_the_run_is_busy_the_page_refreshes_itself(client, walk):
    path = walk(run_steps=False)
    response = client.get(path)
    assert response.status_code == 200 and refreshes_every(response) == 2
    assert b"This page updates by itself" in response.content
    assert re.search(rb"<script(?![^>]*\bsrc=)", response.content) is None  # only its static script: no JS needed
    assert "no-store" in response["Cache-Control"]


def test_the_session_page_walks_two_forms_to_the_completion_message(client, walk, django_capture_on_commit_callbacks):
    path = walk(completion={"message": "See you soon."})
    first = client.get(path)
    assert b"Your size" in first.content and b'name="fg-step" value="size"' in first.content
    assert page(client.get(path)) == page(first)  # a reload shows the same form
    invalid = post_step(client, path, django_capture_on_commit_callbacks, size="XXL")
    assert invalid.status_code == 400 and b"Select a valid choice" in invalid.content
    answered = post_step(client, path, django_capture_on_commit_callbacks, size="M")
    assert answered.status_code == 303 and not answered["Location"].startswith(("/", "http"))
    assert b"Anything else?" in client.get(path).content
    post_step(client, path, django_capture_on_commit_callbacks, note="Blue please")
    done = client.get(path)
    assert done.status_code == 200 and b"See you soon." in done.content
    run = Run.objects.get()
    assert run.status == "succeeded" and run.steps[2]["output"] == {"order": "M for ada@example.com"}
    assert run.steps[1]["output"] == {"note": "Blue please"}
    assert page(client.get(path)) == page(done)  # reload and back keep showing the end


def test_once_answered_the_page_refreshes_until_a_worker_has_gone_on(client, walk):
    path = walk()
    step_page = client.get(path)
    assert b'name="fg-step" value="size"' in step_page.content
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', step_page.content).group(1).decode()
    assert client.post(path, {"fg-step": "size", "size": "S", "csrfmiddlewaretoken": token}).status_code == 303
    # No worker yet: the answer is recorded and the run still waits at the step.
    run = Run.objects.get()
    assert run.status == "waiting" and run.answer == {"size": "S"}
    response = client.get(path)
    assert refreshes_every(response) == 2 and b"fg-step" not in response.content


def test_a_form_of_an_earlier_step_sent_again_changes_nothing(client, walk, django_capture_on_commit_callbacks):
    path = walk()
    post_step(client, path, django_capture_on_commit_callbacks, size="S")
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(path, {"fg-step": "size", "size": "L"})
    assert again.status_code == 303
    run = Run.objects.get()
    assert run.waiting_for["step"] == "note" and run.steps[0]["output"] == {"size": "S"}


def test_the_completion_may_send_the_visitor_to_a_url(client, walk):
    path = walk([], completion={"redirect": "https://example.com/thanks"})
    response = client.get(path)
    assert response.status_code == 303 and response["Location"] == "https://example.com/thanks"


def test_a_failed_run_shows_that_something_went_wrong(client, walk):
    path = walk([{"id": "boom", "kind": "delay", "until": "not a time"}])
    response = client.get(path)
    assert response.status_code == 200 and b"Something went wrong" in response.content


def test_a_run_that_waits_for_someone_else_says_so_and_is_asked_about_far_less_often(client, walk):
    path = walk([{"id": "boss", "kind": "form", "to": "link", "fields": [{"name": "ok", "type": "checkbox"}]}])
    assert Run.objects.get().status == "waiting"
    page = client.get(path)
    assert refreshes_every(page) == 30 and b"waits for someone else" in page.content
    assert client.get(path + "/state").json() == {"state": "waiting"}


def test_the_session_pages_script_learns_where_the_run_is_from_a_small_answer(
    client, walk, django_capture_on_commit_callbacks
):
    busy = walk(run_steps=False)
    assert client.get(busy + "/state").json() == {"state": "busy"}
    assert b"session.js" in client.get(busy).content
    path = walk()
    answer = client.get(path + "/state")
    assert answer.json() == {"state": "form"} and "no-store" in answer["Cache-Control"]
    post_step(client, path, django_capture_on_commit_callbacks, size="S")
    post_step(client, path, django_capture_on_commit_callbacks, note="")
    assert client.get(path + "/state").json() == {"state": "done"}
    for wrong in ("/form/run/nothing/state", path[:-2] + "zz/state"):
        missed = client.get(wrong)
        assert missed.status_code == 404 and missed.json() == {"error": "not found"}
    assert client.post(path + "/state").status_code == 405
