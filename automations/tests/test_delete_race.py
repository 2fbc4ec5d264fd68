"""Deleting an automation while its webhooks arrive and its deliveries run (issue 13, section 6), on PostgreSQL.

Real threads on connections of their own: the intake (the hooks process's handler
behind the test client, and its writer thread), the worker's functions, and the delete. Where
an order matters, a thread is held at a point until pg_stat_activity shows
the other one waiting for its lock; nothing waits for a time to pass.
"""

import functools
import threading
from urllib.parse import urlsplit

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.db.models.deletion import get_candidate_relations_to_delete
from django.test import Client

from automations import runs
from automations import services as automation_services
from automations.models import Automation, Run
from hooks import deliveries as hook_deliveries
from hooks import intake
from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery
from tests.e2e.stack import wait_until
from tests.processes import HooksProcess

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL"),
    pytest.mark.usefixtures("sent_deliveries"),  # the tests call the worker's functions themselves: no message is sent
]

STEPS = [
    {"id": "who", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
    {"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": "{{steps.who.n}}"}},
]
HELD = 60  # seconds a held thread waits to be let go before it gives up (a test that hangs, not a timing)


class Side(threading.Thread):
    """A call on a thread of its own (so on a database connection of its own); keeps what it returned or raised."""

    def __init__(self, function, **kwargs):
        super().__init__(daemon=True)
        self.function, self.kwargs = function, kwargs
        self.result = self.error = self.pid = None
        self.connected = threading.Event()

    def run(self):
        try:
            connection.ensure_connection()
            self.pid = connection.connection.info.backend_pid
            self.connected.set()
            self.result = self.function(**self.kwargs)
        except BaseException as error:  # noqa: BLE001 - kept for the test's assertions
            self.error = error
        finally:
            self.connected.set()
            connections.close_all()

    def begin(self) -> "Side":
        self.start()
        assert self.connected.wait(HELD)
        return self

    def outcome(self):
        """What the call returned; raises what it raised."""
        self.join(HELD)
        assert not self.is_alive(), f"{self.function.__name__} did not end"
        if self.error is not None:
            raise self.error
        return self.result


class Gate:
    """A point a thread stops at until the test opens the gate."""

    def __init__(self):
        self.reached, self.opened = threading.Event(), threading.Event()

    def hold(self):
        self.reached.set()
        assert self.opened.wait(HELD), "the gate was never opened"

    def wait_reached(self):
        assert self.reached.wait(HELD), "the thread never reached the gate"

    def open(self):
        self.opened.set()


def waiting(pid: int) -> bool:
    """Whether that backend waits for a lock another holds (read afresh: this test's connection is in autocommit)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid])
        return cursor.fetchone()[0]


def blocked_by(pid: int) -> set[int]:
    """The backends waiting for a lock that pid holds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", [pid])
        return {row[0] for row in cursor.fetchall()}


def blocking(pid: int) -> set[int]:
    """The backends holding a lock that pid waits for."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT unnest(pg_blocking_pids(%s))", [pid])
        return {row[0] for row in cursor.fetchall()}


def hook_path(automation) -> str:
    return urlsplit(automation_services.hook_url(automation)).path


def post(path: str, n: int = 1):
    """A webhook through the hooks process's handler, in-process (tests/processes.py)."""
    client = Client()
    client.handler = HooksProcess()
    return client.post(path, data=b'{"n": %d}' % n, content_type="application/json")


def committed_delivery(automation) -> Delivery:
    response = post(hook_path(automation))
    assert response.status_code == 200
    return Delivery.objects.get(public_id=response["X-Flowgate-Delivery-Id"])


def assert_gone(automation, path: str):
    """Deleted, nothing left that points at it, and its webhook URL answers 404."""
    assert not Automation.objects.filter(pk=automation.pk).exists()
    for relation in get_candidate_relations_to_delete(Automation._meta):
        rows = relation.related_model._base_manager.filter(**{relation.field.name: automation.pk})
        assert not rows.exists(), f"{relation.related_model.__name__} rows outlived their automation"
    assert (post(path).status_code, Delivery.objects.count()) == (404, 0)


def start_run(*, automation, delivery, gate):
    """The worker's transaction (hooks.deliveries.start_runs): the delivery's row locked, its run queued and linked,
    held before commit."""
    with transaction.atomic():
        Delivery.objects.select_for_update().get(pk=delivery.pk)
        run = runs.queue(automation=automation, trigger={}, source=Run.Source.WEBHOOK, dispatch=False)
        Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.DONE, run=run)
        gate.hold()
    return run


def deleter(how: str, automation, staff_client):
    """A call that deletes the automation: the service itself, or admin's delete page or "delete selected" action."""
    if how == "service":
        return functools.partial(automation_services.delete_automation, automation=automation)
    if how == "admin delete":
        url, data = f"/admin/automations/automation/{automation.pk}/delete/", {"post": "yes"}
    else:
        url = "/admin/automations/automation/"
        data = {"action": "delete_selected", "_selected_action": [automation.pk], "post": "yes"}

    def through_admin():
        assert staff_client.post(url, data).status_code == 302  # not a 500

    return through_admin


@pytest.mark.parametrize("how", ["service", "admin delete", "admin delete selected"])
def test_a_run_committed_while_the_delete_waits_goes_with_it(make_automation, staff_client, how):
    """The issue's race: a worker commits a new run while the delete is under way. The run goes; the delete works."""
    automation = make_automation(STEPS)
    path = hook_path(automation)
    delivery = committed_delivery(automation)
    gate = Gate()
    worker = Side(start_run, automation=automation, delivery=delivery, gate=gate).begin()
    gate.wait_reached()
    deleting = Side(deleter(how, automation, staff_client)).begin()
    wait_until(lambda: waiting(deleting.pid), message="the delete to wait for the worker's delivery")
    gate.open()
    deleting.outcome()
    run = worker.outcome()
    assert not Run.objects.filter(pk=run.pk).exists()
    assert_gone(automation, path)


def test_a_worker_whose_run_is_queued_while_the_delete_waits_ends_quietly(make_automation, monkeypatch, caplog):
    """The real worker, held once its run is queued: the delete waits for the delivery's row, then takes the run with
    it, and the worker, going on with a run that is gone, ends quietly."""
    automation = make_automation(STEPS)
    path = hook_path(automation)
    delivery = committed_delivery(automation)
    gate, queue_all = Gate(), runs.queue_all

    def queue_then_wait(*args, **kwargs):
        queued = queue_all(*args, **kwargs)
        gate.hold()
        return queued

    monkeypatch.setattr(runs, "queue_all", queue_then_wait)
    worker = Side(hook_deliveries.process_delivery, delivery_id=delivery.pk).begin()
    gate.wait_reached()
    deleting = Side(automation_services.delete_automation, automation=automation).begin()
    wait_until(lambda: waiting(deleting.pid), message="the delete to wait for the worker's delivery")
    gate.open()
    deleting.outcome()
    worker.outcome()
    assert not Run.objects.exists()
    assert not [record for record in caplog.records if record.levelname in ("ERROR", "CRITICAL")]
    assert_gone(automation, path)


def test_what_commits_after_the_delete_locked_the_automation_fails_and_the_intake_answers_404(make_automation):
    """A run, a delivery and a webhook whose rows commit once the delete holds the automation: all refused.

    A worker's transaction gets IntegrityError from its COMMIT (Django's
    foreign keys are checked at commit), not from the insert; the intake
    answers 404.
    """
    automation = make_automation(STEPS)
    path = hook_path(automation)
    finished = runs.start(automation=automation, trigger={}, source=Run.Source.WEBHOOK)
    saving, inserting = Gate(), Gate()
    inserted = []

    def save_outcome():  # a worker saving a run's outcome at that moment: the delete waits for its row
        with transaction.atomic():
            Run.objects.select_for_update().get(pk=finished.pk)
            saving.hold()

    def insert_delivery_and_run():
        with transaction.atomic():
            hook_services.accept_delivery(
                automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", "", "text/plain", b"late")
            )
            runs.start(automation=automation, trigger={}, source=Run.Source.WEBHOOK)
            inserting.hold()
            inserted.append(True)

    holder = Side(save_outcome).begin()
    saving.wait_reached()
    late = Side(insert_delivery_and_run).begin()
    inserting.wait_reached()
    deleting = Side(automation_services.delete_automation, automation=automation).begin()
    wait_until(lambda: holder.pid in blocking(deleting.pid), message="the delete to hold the automation and wait")
    inserting.open()
    wait_until(lambda: waiting(late.pid), message="the late commit to wait for the delete")
    request = Side(post, path=path).begin()
    wait_until(lambda: blocked_by(deleting.pid) - {late.pid}, message="the webhook's insert to wait for the delete")
    saving.open()
    deleting.outcome()
    holder.outcome()
    assert request.outcome().status_code == 404
    with pytest.raises(IntegrityError):
        late.outcome()
    assert inserted == [True]  # every statement succeeded: the commit raised
    assert_gone(automation, path)


def test_a_delete_caught_in_a_deadlock_starts_again_and_wins(make_automation):
    """A transaction that locks a run before its delivery (a lost worker's run marked abandoned) meets the delete.

    PostgreSQL fails one of the two; when it is the delete, the delete starts again.
    """
    automation = make_automation(STEPS)
    path = hook_path(automation)
    delivery = committed_delivery(automation)
    previous = runs.start(automation=automation, trigger={}, source=Run.Source.WEBHOOK)
    gate = Gate()

    def abandon_previous_then_link():
        with transaction.atomic():
            Run.objects.filter(pk=previous.pk).update(status=Run.Status.ABANDONED)
            gate.hold()
            Delivery.objects.filter(pk=delivery.pk).update(run=previous)

    worker = Side(abandon_previous_then_link).begin()
    gate.wait_reached()
    deleting = Side(automation_services.delete_automation, automation=automation).begin()
    wait_until(lambda: worker.pid in blocking(deleting.pid), message="the delete to wait for the worker's run")
    gate.open()
    deleting.outcome()
    worker.join(HELD)  # it may be the one PostgreSQL failed
    assert_gone(automation, path)


def test_deleting_the_owner_takes_a_run_committed_meanwhile(make_automation, owner):
    """The database's ON DELETE CASCADE: a delete that does not go through the service cannot fail this way either."""
    automation = make_automation(STEPS)
    path = hook_path(automation)
    delivery = committed_delivery(automation)
    gate = Gate()
    worker = Side(start_run, automation=automation, delivery=delivery, gate=gate).begin()
    gate.wait_reached()
    deleting = Side(owner.delete).begin()
    wait_until(lambda: waiting(deleting.pid), message="the owner's delete to wait for the worker's delivery")
    gate.open()
    deleting.outcome()
    worker.outcome()
    assert_gone(automation, path)


def test_every_foreign_key_to_automations_and_runs_acts_in_the_database():
    """Django recreates a constraint without its action when a migration alters the field: this notices."""
    actions = {"CASCADE": "c", "SET_NULL": "n"}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, att.attname, confdeltype FROM pg_constraint "
            "JOIN pg_attribute att ON att.attrelid = conrelid AND att.attnum = conkey[1] "
            "WHERE contype = 'f' AND confrelid::regclass::text IN (%s, %s)",
            [Automation._meta.db_table, Run._meta.db_table],
        )
        found = {(table, column): action for table, column, action in cursor.fetchall()}
    wanted = {
        (relation.related_model._meta.db_table, relation.field.column): actions[relation.on_delete.__name__]
        for model in (Automation, Run)
        for relation in get_candidate_relations_to_delete(model._meta)
    }
    assert found == wanted


ROUNDS = 30


def test_deleting_at_once_after_webhooks_wins_every_round(make_automation):
    """The issue's reproduction, many times: a webhook, the real worker, an insert like it and a delete, together."""
    for n in range(ROUNDS):
        automation = make_automation(STEPS, name=f"round {n}")
        path = hook_path(automation)
        delivery = committed_delivery(automation)
        start = threading.Barrier(4)

        def together(function, barrier=start, **kwargs):
            def call():
                barrier.wait(HELD)
                return function(**kwargs)

            return Side(call)

        def insert_like_the_worker(automation=automation):
            with transaction.atomic():
                accepted = hook_services.accept_delivery(
                    automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", "", "text/plain", b"2")
                )
                runs.start(automation=automation, trigger={}, source=Run.Source.WEBHOOK)
            return accepted

        sides = [
            together(hook_deliveries.process_delivery, delivery_id=delivery.pk),
            together(post, path=path, n=n),
            together(insert_like_the_worker),
            together(automation_services.delete_automation, automation=automation),
        ]
        for side in sides:
            side.begin()
        worker, request, inserting, deleting = sides
        deleting.outcome()
        worker.outcome()  # the worker ends quietly
        assert request.outcome().status_code in (200, 404)
        try:
            inserting.outcome()
        except (IntegrityError, intake.AutomationGone):  # it came too late: refused
            pass
        assert_gone(automation, path)
