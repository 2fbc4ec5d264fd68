"""Group commit and batched dispatch of accepted deliveries (hooks/intake.py), on real connections."""

import asyncio
import threading

import psycopg
import pytest
from django.db import DataError, connection

from automations import services as automation_services
from hooks import intake, statements
from hooks.models import Delivery
from hooks.tests.inserts import inserts_through
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


def store_all(rows, *, first=None, first_started=None):
    """Store the rows as concurrent requests of one event loop; the errors by body. The first, if given, goes
    alone, and the others once its commit has started (first_started), so that they queue behind it."""

    async def requests():
        errors = {}

        async def store(row):
            try:
                await intake.writer.store(row)
            except Exception as error:  # noqa: BLE001 - collected for the assertions
                errors[row.body] = error

        ahead = []
        if first is not None:
            ahead.append(asyncio.ensure_future(store(first)))
            assert await asyncio.get_running_loop().run_in_executor(None, first_started.wait, 20)
        await asyncio.gather(*ahead, *(store(row) for row in rows))
        return errors

    return asyncio.run(requests())


class Batches(list):
    """The rows of each INSERT the writer sends (a batch, or a row retried alone), and how its first is held back."""

    first_started: threading.Event
    behind: int = 0  # requests to let queue up behind the first commit before it goes on


@pytest.fixture
def batches(monkeypatch, sent_deliveries):
    """The first INSERT is held until the requests expected behind it are queued, so that they pile up."""
    sizes, insert = Batches(), statements.insert_deliveries
    sizes.first_started = threading.Event()

    def held_first(rows):
        sizes.append(len(rows))
        if len(sizes) == 1:
            sizes.first_started.set()
            wait_until(
                lambda: len(intake.writer.waiting) >= sizes.behind, 20, 0.01, "requests gathered behind the first"
            )
        return insert(rows)

    inserts_through(monkeypatch, held_first)
    return sizes


def test_requests_waiting_together_share_one_commit(make_automation, batches):
    automation = make_automation([])
    batches.behind = 20
    rows = [delivery_for(automation, n) for n in range(20)]
    assert store_all(rows, first=delivery_for(automation, -1), first_started=batches.first_started) == {}
    assert batches == [1, 20]
    assert Delivery.objects.count() == 21


def test_a_row_of_a_deleted_automation_fails_alone(make_automation, batches):
    kept, deleted = make_automation([]), make_automation([], name="deleted")
    doomed = delivery_for(deleted, 99)
    automation_services.delete_automation(automation=deleted)
    batches.behind = 6
    rows = [delivery_for(kept, n) for n in range(5)] + [doomed]
    errors = store_all(rows, first=delivery_for(kept, -1), first_started=batches.first_started)
    assert list(errors) == [b"99"] and isinstance(errors[b"99"], intake.AutomationGone)
    assert batches == [1, 6] + [1] * 6  # the batch failed, then each row was inserted alone
    assert Delivery.objects.count() == 6


def test_the_rows_of_a_failed_batch_that_commit_alone_leave_in_one_message(make_automation, batches, sent_deliveries):
    kept, deleted = make_automation([]), make_automation([], name="deleted")
    doomed = delivery_for(deleted, 99)
    automation_services.delete_automation(automation=deleted)
    batches.behind = 4
    rows = [delivery_for(kept, n) for n in range(3)] + [doomed]
    assert list(store_all(rows, first=delivery_for(kept, -1), first_started=batches.first_started)) == [b"99"]
    intake.stop()  # the writer sends what it holds before it ends
    assert batches == [1, 4] + [1] * 4
    assert [len(ids) for ids in sent_deliveries] == [1, 3]
    assert sorted(sum(sent_deliveries, [])) == sorted(Delivery.objects.values_list("pk", flat=True))


def test_committed_deliveries_are_queued_in_batches_and_run(make_automation, eager_tasks):
    if connection.vendor == "sqlite":
        pytest.skip("the test database is in-memory SQLite, which the writer thread and the test's would lock")
    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    assert store_all([delivery_for(automation, n) for n in range(10)]) == {}
    wait_until(lambda: not Delivery.objects.exclude(status="done").exists(), 20, 0.05, "every delivery done")


def test_a_request_is_never_told_stored_when_the_writer_fails(make_automation, monkeypatch):
    automation = make_automation([])

    def broken(deliveries):
        raise RuntimeError("a fault nobody planned for")

    inserts_through(monkeypatch, broken)
    errors = store_all([delivery_for(automation)])
    assert isinstance(errors[b"0"], RuntimeError)
    assert not Delivery.objects.exists()


def test_a_row_stored_by_djangos_view_commits_alone_and_a_deleted_automation_is_gone(make_automation, eager_tasks):
    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    row = delivery_for(automation)
    intake.store(row)  # committed, and its run queued on commit (eager here)
    assert Delivery.objects.get(pk=row.pk).status == "done"
    gone = make_automation([], name="gone")
    doomed = delivery_for(gone, 1)
    automation_services.delete_automation(automation=gone)
    with pytest.raises(intake.AutomationGone):
        intake.store(doomed)
    assert Delivery.objects.count() == 1


def test_a_broker_that_is_down_loses_no_delivery(make_automation, monkeypatch, eager_tasks):
    from automations import runs
    from hooks import tasks

    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])

    def broker_down(*args, **kwargs):
        raise ConnectionError("the broker is down")

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", broker_down)
    delivery = delivery_for(automation)
    assert store_all([delivery]) == {}  # committed: the request gets its 200
    intake.stop()  # the writer tried to queue it and gave up
    assert Delivery.objects.get(pk=delivery.pk).status == "pending"
    Delivery.objects.update(received_at=Delivery.objects.get().received_at.replace(year=2000))
    runs.sweep()  # beat's sweeper queues it (eager here) and it runs
    assert Delivery.objects.get(pk=delivery.pk).run.status == "succeeded"


@pytest.fixture
def messages(monkeypatch):
    """The id lists the writer publishes, in order; rows get ids without a database."""
    from hooks import tasks

    sent, arrived, ids = [], threading.Event(), iter(range(1000))

    def apply_async(args, **options):
        sent.append(list(args[0]))
        arrived.set()

    def insert(rows):
        for row in rows:
            row.pk = next(ids)

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", apply_async)
    inserts_through(monkeypatch, insert)
    return sent, arrived


def row(n=0):
    return intake.Accepted(1, "POST", "/", "", "", str(n).encode(), str(n))


def test_the_first_ids_after_a_quiet_spell_leave_at_once(messages, monkeypatch):
    sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 60)
    assert store_all([row()]) == {}
    assert arrived.wait(10), "the first ids waited for the coalescing window"
    assert sent == [[0]]


def test_ids_committed_close_together_leave_in_one_message(messages, monkeypatch):
    sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 2)

    async def requests():
        await intake.writer.store(row())
        assert await asyncio.to_thread(arrived.wait, 10)
        arrived.clear()
        await intake.writer.store(row())  # within the window of the message that just left
        await asyncio.gather(intake.writer.store(row()), intake.writer.store(row()))
        assert await asyncio.to_thread(arrived.wait, 10)

    asyncio.run(requests())
    assert sent == [[0], [1, 2, 3]]


def test_a_full_message_leaves_without_waiting_out_the_window(messages, monkeypatch):
    sent, arrived = messages
    monkeypatch.setattr(intake, "COALESCE_SECONDS", 60)

    async def requests():
        await intake.writer.store(row())
        assert await asyncio.to_thread(arrived.wait, 10)
        await asyncio.gather(*(intake.writer.store(row(n)) for n in range(intake.DISPATCH_CHUNK)))
        full = lambda: sum(map(len, sent)) == 1 + intake.DISPATCH_CHUNK  # noqa: E731
        await asyncio.to_thread(wait_until, full, 10, 0.01, "a full message, not the window")

    asyncio.run(requests())
    assert sent == [[0], list(range(1, intake.DISPATCH_CHUNK + 1))]


def test_a_message_carries_at_most_a_chunk_of_ids(messages):
    sent, _ = messages
    chunk = intake.DISPATCH_CHUNK
    intake.writer.unsent = list(range(2 * chunk + 10))
    intake.stop()  # the writer sends what it holds
    assert [len(ids) for ids in sent] == [chunk, chunk, 10]
    assert sum(sent, []) == list(range(2 * chunk + 10))


def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("the libpq path of statements.insert_deliveries is PostgreSQL's")


def test_a_batch_larger_than_the_prepared_sizes_is_stored_with_each_id(make_automation):
    automation = make_automation([])
    rows = [delivery_for(automation, n) for n in range(statements.PREPARED_BATCH + 8)]
    statements.insert_deliveries(rows)
    stored = {delivery.public_id: delivery for delivery in Delivery.objects.all()}
    assert len(stored) == len(rows)
    for row in rows:
        delivery = stored[row.public_id]
        columns = (delivery.pk, bytes(delivery.body), delivery.status, delivery.run_id)
        assert columns == (row.pk, row.body, "pending", None)
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
    statements.insert_deliveries([row])
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
        statements.insert_deliveries([row])
    assert not Delivery.objects.exists()
    statements.insert_deliveries([delivery_for(automation, 1)])  # the connection is still good
    assert Delivery.objects.count() == 1


def test_a_connection_the_server_closed_is_replaced_and_the_delivery_stored(make_automation, sent_deliveries):
    postgresql_only()
    automation = make_automation([])
    store_all([delivery_for(automation, 1)])  # the writer has its connection now
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND query LIKE %s",
            ['INSERT INTO "hooks_delivery"%'],
        )
        cursor.execute("SELECT pg_terminate_backend(%s)", [cursor.fetchone()[0]])
    assert store_all([delivery_for(automation, 2)]) == {}  # the batch failed, and its row was stored alone
    assert store_all([delivery_for(automation, 3)]) == {}  # on a new connection, its statement prepared anew
    assert sorted(bytes(body) for body in Delivery.objects.values_list("body", flat=True)) == [b"1", b"2", b"3"]


def test_a_broker_out_of_reach_is_logged_once_when_it_goes_and_once_when_it_comes_back(monkeypatch, caplog):
    """Issue 31: a Redis restart under load wrote a traceback for every group commit it could not queue."""
    import kombu.exceptions

    from hooks import tasks

    failure: list[Exception] = [kombu.exceptions.OperationalError("Error 111 connecting to 127.0.0.1:6399.")]

    def apply_async(args, **options):
        if failure:
            raise failure[0]

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", apply_async)
    monkeypatch.setattr(intake, "broker", intake.BrokerOutage())
    caplog.set_level("WARNING", logger="hooks.intake")
    for ids in ([1, 2], [3], [4, 5, 6]):
        intake._publish(ids)
    failure.clear()
    intake._publish([7])
    intake._publish([8])
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "the broker cannot be reached (OperationalError: Error 111 connecting to 127.0.0.1:6399.): deliveries are "
        "stored and answered as ever, and the sweeper queues them until it answers again",
        lines[1],
    ]
    assert lines[1].startswith("the broker answers again after ")
    assert lines[1].endswith("; 6 deliveries were left to the sweeper meanwhile")
    assert "Traceback" not in caplog.text


def test_a_failure_to_queue_that_is_not_the_broker_out_of_reach_keeps_its_traceback(monkeypatch, caplog):
    from hooks import tasks

    def apply_async(args, **options):
        raise TypeError("a message that cannot be encoded")

    monkeypatch.setattr(tasks.process_deliveries, "apply_async", apply_async)
    monkeypatch.setattr(intake, "broker", intake.BrokerOutage())
    caplog.set_level("WARNING", logger="hooks.intake")
    intake._publish([1])
    intake._publish([2])
    assert len(caplog.records) == 2
    assert caplog.text.count("Traceback (most recent call last)") == 2
    assert intake.broker.since is None


def test_on_postgresql_a_group_commits_on_the_event_loop_while_the_writers_thread_is_busy(
    make_automation, sent_deliveries, monkeypatch
):
    postgresql_only()
    automation = make_automation([])
    assert store_all([delivery_for(automation, 0)]) == {}  # connected: connecting is the thread's part
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 5)
    busy = threading.Event()
    intake.writer.thread.submit(busy.wait, 30)
    try:
        assert store_all([delivery_for(automation, n) for n in (1, 2)]) == {}
    finally:
        busy.set()
    assert Delivery.objects.count() == 3


@pytest.fixture
def lock_deliveries():
    """lock(): a connection of the test's own takes the deliveries table's lock, so that the writer's INSERT waits
    until the test calls its rollback()."""
    lockers = []

    def lock() -> psycopg.Connection:
        lockers.append(psycopg.connect(**connection.get_connection_params()))
        lockers[-1].execute(f"LOCK TABLE {Delivery._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        return lockers[-1]

    yield lock
    for locker in lockers:
        locker.close()


async def until(condition, what: str, seconds: float = 10) -> None:
    """Return once condition() holds, polling on the event loop; fail the test after seconds."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"never: {what}")
        await asyncio.sleep(0.01)


def waits_for_the_lock(locker: psycopg.Connection) -> bool:
    """Whether the writer's INSERT waits for the lock the locker holds (asked on the locker's own connection)."""
    waiting = (
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() "
        "AND pid = %s"
    )
    if (writer := intake.writer.on_loop.conn) is None:
        return False  # not connected yet
    locker.execute("SELECT pg_stat_clear_snapshot()")  # its transaction would otherwise read its first snapshot again
    return locker.execute(waiting, [writer.info.backend_pid]).fetchone()[0] == 1


def test_a_group_whose_commit_does_not_answer_in_time_is_refused_and_stored_at_most_once(
    make_automation, sent_deliveries, monkeypatch, lock_deliveries
):
    postgresql_only()
    automation = make_automation([])
    assert store_all([delivery_for(automation, 0)]) == {}
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 1)
    locker = lock_deliveries()

    async def requests():
        with pytest.raises(intake.DatabaseError, match="not committed in time"):
            await intake.writer.store(delivery_for(automation, 1))
        # The writer gave up on it too, and dropped its connection.
        await until(lambda: intake.writer.on_loop.conn is None, "the writer dropped its connection")
        locker.rollback()  # the INSERT left waiting on the server commits now
        # On a new connection; a copy of 1 sent again would be in this commit or one before it.
        await intake.writer.store(delivery_for(automation, 2))

    asyncio.run(requests())
    wait_until(lambda: Delivery.objects.filter(body=b"1").exists(), 10, 0.05, "the INSERT left on the server")
    assert sorted(bytes(body) for body in Delivery.objects.values_list("body", flat=True)) == [b"0", b"1", b"2"]


def test_the_writers_connection_closed_from_another_thread_mid_commit_is_closed_once_the_commit_ends(
    make_automation, sent_deliveries, monkeypatch, lock_deliveries
):
    postgresql_only()
    automation = make_automation([])
    assert store_all([delivery_for(automation, 0)]) == {}
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 5)
    locker = lock_deliveries()

    async def requests():
        pending = asyncio.ensure_future(intake.writer.store(delivery_for(automation, 1)))
        await until(lambda: waits_for_the_lock(locker), "the INSERT waits for the lock")
        await asyncio.to_thread(intake.writer.on_loop.close)  # as stop() may, from another thread
        assert intake.writer.on_loop.conn is not None  # not closed under the statement
        locker.rollback()
        await pending  # committed and answered
        assert intake.writer.on_loop.conn is None  # closed once it ended

    asyncio.run(requests())
    assert sorted(bytes(body) for body in Delivery.objects.values_list("body", flat=True)) == [b"0", b"1"]
