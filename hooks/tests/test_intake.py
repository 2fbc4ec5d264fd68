"""Group commit and batched dispatch of accepted deliveries (hooks/intake.py), on real connections."""

import threading
import time

import pytest
from django.db import DataError, connection

from automations import services as automation_services
from hooks import intake, statements
from hooks.models import Delivery
from tests.e2e.stack import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def delivery_for(automation, n=0):
    return intake.Accepted(
        automation_id=automation.pk,
        method="POST",
        path="/",
        query_string="",
        content_type="",
        body=str(n).encode(),
        body_digest=str(n),
    )


def store_all(deliveries):
    errors = {}

    def store(delivery):
        try:
            intake.store(delivery)
        except Exception as error:  # noqa: BLE001 - collected for the assertions
            errors[delivery.body] = error

    threads = [threading.Thread(target=store, args=(delivery,)) for delivery in deliveries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


class Batches(list):
    """The size of each batch the writer commits, and how its first commit is held back."""

    first_started: threading.Event
    behind: int = 0  # requests to let queue up behind the first commit before it goes on


@pytest.fixture
def batches(monkeypatch):
    """The first commit is held until the requests expected behind it are queued, so that they pile up."""
    sizes, real = Batches(), intake._Writer._commit
    sizes.first_started = threading.Event()

    def commit(self, batch):
        sizes.append(len(batch))
        if len(sizes) == 1:
            sizes.first_started.set()
            wait_until(lambda: self._queue.qsize() >= sizes.behind, 20, 0.01, "requests queued behind the first commit")
        real(self, batch)

    monkeypatch.setattr(intake._Writer, "_commit", commit)
    monkeypatch.setattr(intake.dispatcher, "send", lambda ids: None)
    return sizes


def test_requests_waiting_together_share_one_commit(make_automation, batches):
    automation = make_automation([])
    batches.behind = 20
    first = threading.Thread(target=intake.store, args=(delivery_for(automation, -1),))
    first.start()
    assert batches.first_started.wait(20)
    assert store_all([delivery_for(automation, n) for n in range(20)]) == {}
    first.join()
    assert batches == [1, 20]
    assert Delivery.objects.count() == 21


def test_a_row_of_a_deleted_automation_fails_alone(make_automation, batches):
    kept, deleted = make_automation([]), make_automation([], name="deleted")
    doomed = delivery_for(deleted, 99)
    automation_services.delete_automation(automation=deleted)
    batches.behind = 6
    first = threading.Thread(target=intake.store, args=(delivery_for(kept, -1),))
    first.start()
    assert batches.first_started.wait(20)
    errors = store_all([delivery_for(kept, n) for n in range(5)] + [doomed])
    first.join()
    assert list(errors) == [b"99"] and isinstance(errors[b"99"], intake.AutomationGone)
    assert Delivery.objects.count() == 6


def test_committed_deliveries_are_queued_in_batches_and_run(make_automation, eager_tasks):
    if connection.vendor == "sqlite":
        pytest.skip("the test database is in-memory SQLite, which concurrent writer threads lock")
    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    assert store_all([delivery_for(automation, n) for n in range(10)]) == {}
    deadline = time.monotonic() + 20
    while Delivery.objects.exclude(status="done").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(Delivery.objects.values_list("status", flat=True)) == {"done"}


def test_a_request_is_never_told_stored_when_the_writer_fails(make_automation, monkeypatch):
    automation = make_automation([])

    def broken(deliveries):
        raise RuntimeError("a fault nobody planned for")

    monkeypatch.setattr(intake, "insert", broken)
    with pytest.raises(RuntimeError):
        intake.store(delivery_for(automation))
    assert not Delivery.objects.exists()


def test_a_broker_that_is_down_loses_no_delivery(make_automation, monkeypatch, eager_tasks):
    from hooks import services, tasks

    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])

    def broker_down(*args, **kwargs):
        raise ConnectionError("the broker is down")

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", broker_down)
    delivery = delivery_for(automation)
    intake.store(delivery)  # committed: the request gets its 200
    intake.stop()  # the dispatcher tried and gave up
    assert Delivery.objects.get(pk=delivery.pk).status == "pending"
    Delivery.objects.update(received_at=Delivery.objects.get().received_at.replace(year=2000))
    services.sweep()  # beat's sweeper queues it (eager here) and it runs
    assert Delivery.objects.get(pk=delivery.pk).status == "done"


@pytest.fixture
def messages(monkeypatch):
    """The id lists a fresh dispatcher publishes, in order."""
    from hooks import tasks

    sent, arrived = [], threading.Event()

    def apply_async(args, **options):
        sent.append(list(args[0]))
        arrived.set()

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", apply_async)
    dispatcher = intake._Dispatcher()
    yield dispatcher, sent, arrived
    dispatcher.stop()


def test_the_first_ids_after_a_quiet_spell_leave_at_once(messages, monkeypatch):
    dispatcher, sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 60)
    dispatcher.send([1])
    assert arrived.wait(10), "the first ids waited for the coalescing window"
    assert sent == [[1]]


def test_ids_committed_close_together_leave_in_one_message(messages, monkeypatch):
    dispatcher, sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 0.5)
    dispatcher.send([1])
    assert arrived.wait(10)
    arrived.clear()
    dispatcher.send([2])  # within the window of the message that just left
    dispatcher.send([3, 4])
    assert arrived.wait(10)
    assert sent == [[1], [2, 3, 4]]


def test_a_full_message_leaves_without_waiting_out_the_window(messages, monkeypatch):
    dispatcher, sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 60)
    dispatcher.send([0])
    assert arrived.wait(10)
    arrived.clear()
    full = list(range(1, intake.DISPATCH_CHUNK + 1))
    dispatcher.send(full)
    assert arrived.wait(10), "a full message waited for the coalescing window"
    assert sent == [[0], full]


def test_a_message_carries_at_most_a_chunk_of_ids(messages):
    dispatcher, sent, arrived = messages
    chunk = intake.DISPATCH_CHUNK
    dispatcher.send(list(range(2 * chunk + 10)))
    dispatcher.stop()  # sends what is pending
    assert [len(ids) for ids in sent] == [chunk, chunk, 10]
    assert sum(sent, []) == list(range(2 * chunk + 10))


def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("the libpq path of intake.insert is PostgreSQL's")


def test_a_batch_larger_than_the_prepared_sizes_is_stored_with_each_id(make_automation):
    automation = make_automation([])
    rows = [delivery_for(automation, n) for n in range(statements.PREPARED_BATCH + 8)]
    intake.insert(rows)
    stored = {delivery.public_id: delivery for delivery in Delivery.objects.all()}
    assert len(stored) == len(rows)
    for row in rows:
        delivery = stored[row.public_id]
        columns = (delivery.pk, bytes(delivery.body), delivery.status, delivery.attempts)
        assert columns == (row.pk, row.body, "pending", 0)
        assert delivery.received_at is not None and delivery.error == ""


def test_every_value_is_stored_byte_for_byte(make_automation):
    automation = make_automation([])
    row = intake.Accepted(
        automation_id=automation.pk,
        method="PUT",
        path="/webhook/automation-ключ",
        query_string="a=1&b=%00",
        content_type="text/plain; charset=latin-1",
        body=bytes(range(256)),
        body_digest="d" * 64,
    )
    intake.insert([row])
    stored = Delivery.objects.get(pk=row.pk)
    assert (
        stored.public_id,
        stored.method,
        stored.path,
        stored.query_string,
        stored.content_type,
        bytes(stored.body),
        stored.body_digest,
    ) == (row.public_id, row.method, row.path, row.query_string, row.content_type, row.body, row.body_digest)


def test_a_value_postgresql_cannot_hold_is_refused_not_cut_short(make_automation):
    postgresql_only()
    automation = make_automation([])
    row = delivery_for(automation)
    row.query_string = "a=1\x00b=2"  # text columns cannot hold NUL; a C string would silently end at it
    with pytest.raises(DataError):
        intake.insert([row])
    assert not Delivery.objects.exists()
    intake.insert([delivery_for(automation, 1)])  # the connection is still good
    assert Delivery.objects.count() == 1


def test_a_connection_the_server_closed_is_replaced_and_the_delivery_stored(make_automation, monkeypatch):
    postgresql_only()
    monkeypatch.setattr(intake.dispatcher, "send", lambda ids: None)
    automation = make_automation([])
    intake.store(delivery_for(automation, 1))  # the writer thread has its connection now
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND query LIKE %s",
            ['INSERT INTO "hooks_delivery"%'],
        )
        cursor.execute("SELECT pg_terminate_backend(%s)", [cursor.fetchone()[0]])
    intake.store(delivery_for(automation, 2))
    assert sorted(bytes(body) for body in Delivery.objects.values_list("body", flat=True)) == [b"1", b"2"]
