"""A connection's URL and an app's shared endpoint end to end: gunicorn, the hooks process, a real Celery worker and
beat on PostgreSQL and Redis (docs/connections.md, "App triggers: per connected account and shared endpoint").

The fault test holds the worker in the middle of a fan-out (a lock on the runs table, taken by the test, stops
its insert of the runs after the copies are written), kills it with SIGKILL there, and checks that the fan-out
rolled back as one and that, taken again by the sweeper, each automation runs exactly once.
"""

import json
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
from django.db import connection as django_connection

from automations.models import LookupRow, Run
from hooks import endpoints
from hooks.models import Delivery
from hooks.tests.app_triggers import connect, listening, make_trigger_apps, only_when
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1", DELIVERY_SWEEP_SECONDS="1", RUN_LEASE_SECONDS="6")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


@pytest.fixture
def apps(make_catalog):
    return make_trigger_apps(make_catalog)


def post(stack, url, body):
    return httpx.post(
        stack.hooks + urlsplit(url).path,
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )


def fan_out_waiting_on_the_lock(database) -> int | None:
    """The backend of a worker whose insert of runs waits on the test's lock, if one does."""
    database.execute("SELECT pg_stat_clear_snapshot()")  # else the transaction sees its first look again
    row = database.execute(
        "SELECT pid FROM pg_stat_activity "
        "WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO \"automations_run\"%%'"
    ).fetchone()
    return row[0] if row else None


def backend_alive(database, pid: int) -> bool:
    database.execute("SELECT pg_stat_clear_snapshot()")
    return database.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone() is not None


def test_ten_automations_on_one_connection_each_run_once_across_a_worker_killed_mid_fan_out(stack, apps, owner):
    crm = connect(owner, apps["acorn-crm"])
    ten = [listening(owner, crm, "new_lead", only_when(n), name=f"Leads {n}") for n in range(10)]
    settings = django_connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"], user=settings["USER"], host=settings["HOST"], port=settings["PORT"] or 5432
    ) as database:
        database.execute('LOCK TABLE "automations_run" IN SHARE MODE')  # held until the commit below
        response = post(stack, endpoints.connection_url(crm), {"n": 5})
        assert response.status_code == 200
        held = wait_until(lambda: fan_out_waiting_on_the_lock(database), 60, 0.05, "the fan-out to reach the runs")
        copies_written = Delivery.objects.filter(automation__isnull=False).exists()
        stack.kill("worker")  # SIGKILL in the middle of the fan-out: copies written, runs being inserted
        database.commit()
        wait_until(lambda: not backend_alive(database, held), 60, message="the lost worker's transaction to end")
    assert not copies_written  # nothing of a transaction under way is seen outside it
    parent = Delivery.objects.get(automation__isnull=True)
    assert parent.status == "pending" and not Delivery.objects.filter(automation__isnull=False).exists()
    assert not Run.objects.exists()  # the lost worker's fan-out rolled back as one
    stack.start_worker()
    wait_until(
        lambda: Run.objects.filter(status__in=("succeeded", "stopped")).count() == 10,
        120,
        0.5,
        "the sweeper to fan the delivery out again",
    )
    # The lost worker's message stays unacknowledged until the broker's visibility timeout, so no "every task done"
    # is waited for here: the delivery is done, under its row lock, so a message taken again finds nothing to do.
    # The sweeper queued the pending delivery at every sweep until it was done: each automation still ran once.
    assert sorted(Run.objects.values_list("automation_id", flat=True)) == sorted(a.pk for a in ten)
    assert sorted(row.table for row in LookupRow.objects.all()) == [f"seen-{n}" for n in range(5)]
    parent.refresh_from_db()
    assert parent.status == "done"
    copies = Delivery.objects.filter(automation__isnull=False)
    assert copies.count() == 10 and set(copies.values_list("status", flat=True)) == {"done"}


def test_a_shared_endpoint_sends_deliveries_for_two_accounts_to_their_connections(
    stack, apps, owner, another_account, staff_client
):
    chat = apps["birch-chat"]
    first = connect(owner, chat, label="Mine", account="acct-1")
    second = connect(another_account, chat, label="Theirs", account="acct-2")
    mine = listening(owner, first, "new_message", only_when(0), name="Mine")
    theirs = listening(another_account, second, "new_message", only_when(0), name="Theirs")
    url = endpoints.app_url(chat)
    sent = [("acct-1", 1), ("acct-2", 2), ("acct-1", 3), ("nobody", 4)]
    for account, n in sent:
        assert post(stack, url, {"account": {"id": account}, "n": n}).status_code == 200
    wait_until(lambda: Run.objects.filter(status="succeeded").count() == 3 and stack.tasks_done(), 60, 0.2, "runs")
    wait_until(lambda: Delivery.objects.filter(status="unmatched").exists(), 30, 0.2, "the unmatched delivery")
    assert sorted(r.trigger["body"]["n"] for r in Run.objects.filter(automation=mine)) == [1, 3]
    assert [r.trigger["body"]["n"] for r in Run.objects.filter(automation=theirs)] == [2]
    unmatched = Delivery.objects.get(status="unmatched")
    assert "nobody" in unmatched.error
    assert str(unmatched.public_id) in staff_client.get("/admin/hooks/delivery/?status__exact=unmatched").text
