"""Double submissions: a hosted form page sent twice starts one run, and two answers racing on a session form or a
one-time link answer the run once (real threads, each with its own PostgreSQL connection)."""

import re
import time

import pytest
from django.db import DatabaseError, connection
from django.test import Client

from automations import runs
from automations.models import Run
from interfaces.forms import services, spam, submissions
from interfaces.tests.support import form_path, shown_token
from tests.races import at_once

GOOD = {"email": "ada@example.com", "topic": "sales"}


def race(*posts):
    """Run each post (a function returning a response) at once on its own thread; their status codes."""
    return sorted(response.status_code for response in at_once(*posts))


@pytest.mark.django_db
def test_a_page_sent_twice_starts_one_run_and_both_go_to_its_session_page(client, make_form):
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(client, path), **GOOD}
    first, second = client.post(path, data), client.post(path, data)
    assert first.status_code == second.status_code == 303
    assert first["Location"] == second["Location"]
    assert Run.objects.count() == 1
    assert client.post(path, {spam.SHOWN: shown_token(client, path), **GOOD})["Location"] != first["Location"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_a_double_click_racing_on_real_threads_starts_one_run(make_form):
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(Client(), path), **GOOD}
    codes = race(lambda: Client().post(path, data), lambda: Client().post(path, data))
    assert Run.objects.count() == 1
    assert 303 in codes and set(codes) <= {303, 409}  # the second: to the session page, or "still sending"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_two_answers_racing_on_a_session_form_answer_the_run_once(make_form):
    ask = {"id": "size", "kind": "form", "fields": [{"name": "size", "type": "text", "required": True}]}
    path = form_path(make_form([ask]))
    sent = Client().post(path, {spam.SHOWN: shown_token(Client(), path), **GOOD})
    session = path.rsplit("/", 1)[0] + "/" + sent["Location"]
    runs.resume(Run.objects.get().pk)  # this thread is the worker: the run now waits for the visitor
    page = Client().get(session).content.decode()
    assert 'name="fg-step" value="size"' in page
    codes = race(
        lambda: Client().post(session, {"fg-step": "size", "size": "S"}),
        lambda: Client().post(session, {"fg-step": "size", "size": "L"}),
    )
    assert codes == [303, 303]
    run = Run.objects.get()
    assert run.answer in ({"size": "S"}, {"size": "L"})
    assert runs.resume(run.pk) and Run.objects.get().steps[0]["output"] == run.answer
    assert re.search(r"Thank you", Client().get(session).content.decode())


@pytest.mark.django_db
def test_a_page_sent_again_while_its_first_is_being_started_says_to_try_again_in_a_moment(client, make_form):
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(client, path), **GOOD}
    assert submissions.claim(data[spam.SHOWN])  # a first POST of this page, between its claim and its run's commit
    response = client.post(path, data)
    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert b"still being sent" in response.content and b"Thank you" not in response.content
    german = client.post(path, data, HTTP_ACCEPT_LANGUAGE="de")
    assert german.status_code == 409 and "Wird noch gesendet" in german.content.decode()
    assert not Run.objects.exists()


class Timeouts:
    """The cache, noting the life each write of a claim is given."""

    def __init__(self, cache):
        self.cache, self.lives = cache, []

    def add(self, key, value, timeout):
        self.lives.append(("add", timeout))
        return self.cache.add(key, value, timeout)

    def set(self, key, value, timeout):
        self.lives.append(("set", timeout))
        return self.cache.set(key, value, timeout)

    def __getattr__(self, name):
        return getattr(self.cache, name)


@pytest.mark.django_db
def test_a_claim_lives_seconds_and_the_run_it_started_a_day(client, make_form, monkeypatch):
    timeouts = Timeouts(submissions.cache)
    monkeypatch.setattr(submissions, "cache", timeouts)
    path = form_path(make_form())
    assert client.post(path, {spam.SHOWN: shown_token(client, path), **GOOD}).status_code == 303
    (claimed, claim_life), (kept, run_life) = timeouts.lives
    assert (claimed, kept) == ("add", "set")
    assert 0 < claim_life <= 60 and run_life == 24 * 3600


@pytest.mark.django_db
def test_a_page_whose_first_post_died_after_its_claim_can_be_sent_again_once_the_claim_runs_out(
    client, make_form, monkeypatch
):
    """The process of the first POST was killed between its claim and its run's commit: nothing releases the claim."""
    monkeypatch.setattr(submissions, "PENDING_SECONDS", 1)
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(client, path), **GOOD}
    assert submissions.claim(data[spam.SHOWN])  # and then the process died
    assert client.post(path, data).status_code == 409
    deadline = time.monotonic() + 30
    while not (probe := submissions.claim(data[spam.SHOWN])):  # until the cache lets the dead POST's claim go
        assert time.monotonic() < deadline, "the claim of a dead POST never ran out"
        time.sleep(0.2)
    submissions.release(data[spam.SHOWN], probe)  # the probe's own claim
    sent = client.post(path, data)
    assert sent.status_code == 303 and Run.objects.count() == 1
    again = client.post(path, data)
    assert again.status_code == 303 and again["Location"] == sent["Location"] and Run.objects.count() == 1


def test_a_post_that_fails_after_its_claim_ran_out_leaves_the_next_posts_claim_alone():
    slow = submissions.claim("page-1")
    submissions.cache.delete(submissions._key("page-1"))  # its claim ran out, and another POST of the page claims it
    assert (later := submissions.claim("page-1"))
    submissions.release("page-1", slow)  # the slow POST fails now
    assert submissions.claim("page-1") is None  # the later POST still holds the page
    submissions.release("page-1", later)
    assert submissions.claim("page-1")


@pytest.mark.django_db(transaction=True)  # commits as production does: a test's own transaction would hide one
def test_a_submission_that_fails_before_its_session_key_starts_no_run_and_the_page_can_be_sent_again(
    client, make_form, monkeypatch
):
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(client, path), **GOOD}
    real_issue_key = services.key_services.issue_key

    def failing_issue_key(**kwargs):
        raise DatabaseError("the key could not be stored")

    monkeypatch.setattr(services.key_services, "issue_key", failing_issue_key)
    assert client.post(path, data).status_code == 503  # the database out of reach (edge/outages.py): send it again
    assert not Run.objects.exists()  # the run went with the key: no run without a session page
    monkeypatch.setattr(services.key_services, "issue_key", real_issue_key)
    assert client.post(path, data).status_code == 303 and Run.objects.count() == 1
