"""Double submissions: a hosted form page sent twice starts one run, and two answers racing on a session form or a
one-time link answer the run once (real threads, each with its own PostgreSQL connection)."""

import re
import threading

import pytest
from django.db import connections
from django.test import Client

from automations import runs
from automations.models import Run
from interfaces import spam
from interfaces.tests.conftest import form_path, shown_token

GOOD = {"email": "ada@example.com", "topic": "sales"}


def race(*posts):
    """Run each post (a function returning a response) at once on its own thread; their status codes."""
    start = threading.Barrier(len(posts), timeout=30)
    codes = []

    def run(post):
        try:
            start.wait()
            codes.append(post().status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(post,)) for post in posts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return sorted(codes)


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
def test_a_double_click_racing_on_real_threads_starts_one_run(make_form):
    path = form_path(make_form())
    data = {spam.SHOWN: shown_token(Client(), path), **GOOD}
    codes = race(lambda: Client().post(path, data), lambda: Client().post(path, data))
    assert Run.objects.count() == 1
    assert 303 in codes and set(codes) <= {200, 303}  # the second: to the session page, or "sent" while pending


@pytest.mark.django_db(transaction=True)
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
