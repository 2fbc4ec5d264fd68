"""A one-time link works once even when two POSTs race, and a used, expired or never-issued link costs alike.

Races run on real threads, each with its own PostgreSQL connection. Costs
are pinned twice: by the statements each link sends (deterministic) and by
comparing the two distributions of a few hundred timed requests with a
rank test, never by a timed assertion.
"""

import math
import random
import re
import threading
import time

import pytest
from django.core import mail
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from automations import runs
from automations.models import Run
from interfaces.forms import selectors, views

ASK = {
    "id": "ask",
    "kind": "form",
    "title": "Ship it?",
    "email": "boss@example.com",
    "fields": [{"name": "ok", "type": "checkbox", "required": True}],
}


def waiting_link(make_automation, steps=(ASK,)) -> str:
    automation = make_automation(list(steps))
    run = runs.queue(automation=automation, trigger={}, source="webhook")
    runs.resume(run.pk)  # this thread is the worker
    return re.search(r"(/form/s/\S+)", mail.outbox[-1].body).group(1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_two_posts_racing_on_one_link_answer_the_run_once(make_automation, monkeypatch, eager_tasks):
    link = waiting_link(make_automation)
    both_read = threading.Barrier(2, timeout=30)
    real_read = selectors.one_time_run

    def read_then_wait(key):
        found = real_read(key)
        both_read.wait()  # both requests have seen the run waiting before either writes
        return found

    monkeypatch.setattr(views.selectors, "one_time_run", read_then_wait)
    codes = []

    def submit():
        try:
            codes.append(Client().post(link, {"ok": "on"}).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(codes) == [200, 404]
    run = Run.objects.get()
    assert run.status == "succeeded" and run.steps[0]["output"] == {"ok": True}


@pytest.fixture
def three_links(db, make_automation, client, django_capture_on_commit_callbacks):
    """A used link, an expired one and one never issued."""
    used = waiting_link(make_automation)
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(used, {"ok": "on"}).status_code == 200
    expired = waiting_link(make_automation, [{**ASK, "expires_after": 0.001}])
    return {"used": used, "expired": expired, "never issued": "/form/s/" + "Q" * 32}


def test_every_link_that_does_not_work_sends_the_same_statements(client, three_links):
    sent = {}
    for name, path in three_links.items():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 404
        sent[name] = [re.sub(r"'[^']*'|\b\d+\b", "?", query["sql"]) for query in queries]
    assert sent["used"] == sent["expired"] == sent["never issued"]


def rank_z(first: list[float], second: list[float]) -> float:
    """The Mann-Whitney U statistic of two samples as a z score (normal approximation, ties averaged)."""
    pooled = sorted([(value, 0) for value in first] + [(value, 1) for value in second])
    ranks = [0.0] * len(pooled)
    index = 0
    while index < len(pooled):
        end = index
        while end + 1 < len(pooled) and pooled[end + 1][0] == pooled[index][0]:
            end += 1
        for tied in range(index, end + 1):
            ranks[tied] = (index + end) / 2 + 1
        index = end + 1
    n1, n2 = len(first), len(second)
    rank_sum = sum(rank for rank, (_, group) in zip(ranks, pooled, strict=True) if group == 0)
    u = rank_sum - n1 * (n1 + 1) / 2
    return (u - n1 * n2 / 2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)


def test_rank_z_sees_a_real_difference():
    assert rank_z([1.0 + i / 1000 for i in range(300)], [1.2 + i / 1000 for i in range(300)]) < -10
    assert abs(rank_z([float(i % 7) for i in range(300)], [float(i % 7) for i in range(300)])) < 0.01


@pytest.mark.parametrize("link", ["used", "expired"])
def test_a_link_that_does_not_work_takes_as_long_as_one_never_issued(client, three_links, link):
    samples = {link: [], "never issued": []}
    order = [link, "never issued"] * 300
    random.Random(15).shuffle(order)  # interleaved, so that drift of a shared machine falls on both alike
    for name in order[:50]:
        client.get(three_links[name])  # warm both paths
    for name in order:
        started = time.perf_counter()
        client.get(three_links[name])
        samples[name].append(time.perf_counter() - started)
    # |z| past 3.9 happens by chance about once in 10,000 runs; a path doing more work gives far more.
    assert abs(rank_z(samples[link], samples["never issued"])) < 3.9
