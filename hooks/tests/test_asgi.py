"""The parts of the hooks process's driver (hooks/asgi.py) that are its own, in-process.

Headers read from the scope, the body read from ASGI messages under the
size limit and the deadline (edge/bodies.py), the writer's deadline, errors. Every answer
through the driver: test_receive.py and test_routes.py; through a real
server: test_hooks_process.py.
"""

import asyncio
import logging
import threading

import pytest

from edge.bodies import BodyIncomplete, BodyTimedOut, BodyTooLarge, bounded, read_messages
from hooks import intake
from hooks.asgi import _headers
from hooks.tests.inserts import inserts_through


def scope(path="/automation-k", *, method="POST", headers=(), query=b"", root_path=""):
    return {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": root_path,
        "query_string": query,
        "headers": list(headers),
        "server": ("hooks.example.com", 443),
        "scheme": "https",
        "client": ("203.0.113.9", 5555),
        "http_version": "1.1",
    }


def test_headers_are_read_by_lower_case_name_with_repeats_joined():
    headers = _headers(scope(headers=[(b"Content-Type", b"application/json"), (b"accept", b"a"), (b"accept", b"b")]))
    assert headers == {"content-type": "application/json", "accept": "a,b"}


def messages(*chunks, disconnect=False):
    queue = [
        {"type": "http.request", "body": chunk, "more_body": n < len(chunks) - 1} for n, chunk in enumerate(chunks)
    ]
    if disconnect:
        queue[-1:] = [{"type": "http.request", "body": chunks[0], "more_body": True}, {"type": "http.disconnect"}]
    received = []

    async def receive():
        received.append(queue[len(received)])
        return received[-1]

    return receive, received


def read(receive, declared=None, limit=100, deadline=float("inf")):
    async def reading():
        return await read_messages(bounded(receive, deadline), declared, limit)

    return asyncio.run(reading())


def test_a_body_arriving_in_messages_is_joined():
    receive, _ = messages(b"ab", b"cd", b"")
    assert read(receive) == b"abcd"


def test_a_declared_length_over_the_limit_is_refused_before_a_message_is_read():
    receive, received = messages(b"x" * 11)
    with pytest.raises(BodyTooLarge):
        read(receive, declared=11, limit=10)
    assert received == []


def test_a_chunked_body_is_refused_once_it_passes_the_limit():
    receive, received = messages(b"x" * 6, b"x" * 6, b"x" * 6)
    with pytest.raises(BodyTooLarge):
        read(receive, limit=10)
    assert len(received) == 2


def test_a_client_that_leaves_mid_body_is_noticed():
    receive, _ = messages(b"x", disconnect=True)
    with pytest.raises(BodyIncomplete):
        read(receive, declared=5)


async def never():
    """A client that sends nothing more."""
    await asyncio.get_running_loop().create_future()


def test_a_body_still_arriving_at_its_deadline_is_timed_out():
    with pytest.raises(BodyTimedOut):
        read(never, declared=10, deadline=0.0)


def test_a_deadline_whose_cancellation_the_server_swallowed_still_times_the_body_out():
    """asyncio.wait_for (Python 3.11) returns the chunk that arrived as it was cancelled, dropping the cancellation."""
    sent = []

    async def trickling():
        if len(sent) == 3:  # a client that gives up, so that a broken deadline ends the test instead of hanging it
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # the chunk arrived in the same instant: it is returned, the cancellation swallowed
        sent.append(b" ")
        return {"type": "http.request", "body": b" ", "more_body": True}

    with pytest.raises(BodyTimedOut):
        read(trickling, declared=1000, limit=10_000, deadline=0.0)
    assert len(sent) == 1


def test_a_body_shorter_than_its_declared_length_is_incomplete():
    receive, _ = messages(b"x" * 5)
    with pytest.raises(BodyIncomplete):
        read(receive, declared=10)


def test_django_gets_a_body_by_its_deadline_and_never_a_cut_off_one():
    async def receive_all(receive):
        return [await receive() for _ in range(2)]

    with pytest.raises(BodyTimedOut):
        asyncio.run(receive_all(bounded(never, deadline=0.0)))
    receive, _ = messages(b"x", disconnect=True)
    with pytest.raises(BodyIncomplete):
        asyncio.run(receive_all(bounded(receive, deadline=float("inf"))))
    # Once the body is whole, receive is passed through: a disconnect then is the caller's to read.
    receive_after = iter([{"type": "http.request", "body": b"x", "more_body": False}, {"type": "http.disconnect"}])

    async def whole_then_gone():
        return next(receive_after)

    assert asyncio.run(receive_all(bounded(whole_then_gone, deadline=float("inf"))))[1] == {"type": "http.disconnect"}


@pytest.fixture
def no_database(monkeypatch, sent_deliveries):
    """Rows get ids without a database, and no task is queued."""
    inserts_through(monkeypatch, lambda rows: [setattr(row, "pk", 1) for row in rows])


def a_row():
    return intake.Accepted(1, "POST", "/", "", "", b"", "")


def test_a_request_whose_row_is_not_committed_in_time_gets_an_error_and_the_writer_goes_on(no_database, monkeypatch):
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 0.05)
    stalled, insert = threading.Event(), intake.statements.insert_deliveries
    inserts_through(monkeypatch, lambda rows: stalled.wait(10) and insert(rows))
    writer = intake.Writer()

    async def late_then_on_time():
        with pytest.raises(intake.DatabaseError, match="not committed in time"):
            await writer.store(a_row())
        stalled.set()  # the commit ends after its request has given up, which is not answered again
        monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 10)
        await writer.store(a_row())

    try:
        asyncio.run(late_then_on_time())
    finally:
        writer.stop()


@pytest.mark.django_db(transaction=True)  # the writer's thread commits on a connection of its own
def test_a_row_that_failed_to_store_raises_its_error_in_the_request(make_automation):
    from automations import services

    gone = make_automation([])
    services.delete_automation(automation=gone)
    writer = intake.Writer()
    try:
        with pytest.raises(intake.AutomationGone):  # its foreign key failed in the batch, then alone
            asyncio.run(writer.store(intake.Accepted(gone.pk, "POST", "/", "", "", b"", "")))
    finally:
        writer.stop()


def call(application, scope_):
    """Run one request through an ASGI application in-process; its start message and body."""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(application(scope_, receive, send))
    return sent


def test_the_loop_reads_maintenance_mode_from_memory_and_asks_a_thread_only_when_a_check_is_due(settings):
    from hooks import maintenance

    settings.MAINTENANCE_MODE = True
    assert maintenance.known() is True  # the setting needs no query
    settings.MAINTENANCE_MODE = False
    maintenance.reset()
    assert maintenance.known() is None  # due: the entry runs maintenance.active() in a thread
    maintenance._switch.set("active", True, seconds=maintenance.CHECK_SECONDS)  # as a thread's answer leaves it
    assert maintenance.known() is True


def test_a_database_that_is_down_during_a_lookup_is_a_503_logged_once_and_the_loop_goes_on(monkeypatch, caplog):
    from django.db import OperationalError

    from edge.outages import outage
    from hooks import asgi, maintenance, selectors

    monkeypatch.setattr(outage, "since", None)
    monkeypatch.setattr(outage, "refused", 0)

    def down(key, fresh=False):
        raise OperationalError("connection refused")

    monkeypatch.setattr(maintenance, "known", lambda: False)
    monkeypatch.setattr(selectors, "remembered_hook_key", lambda key: None)  # not remembered: a thread asks
    monkeypatch.setattr(selectors, "automation_id_for_hook_key", down)
    monkeypatch.setattr(asgi, "close_old_connections", lambda: None)
    logger = logging.getLogger("django.request")
    logger.addHandler(caplog.handler)
    try:
        application = asgi.HooksApplication(fallback=None)
        answers = [call(application, scope(headers=[(b"host", b"testserver")]))[0] for _ in range(2)]
    finally:
        logger.removeHandler(caplog.handler)
    assert [answer["status"] for answer in answers] == [503, 503]
    assert all((b"retry-after", b"5") in answer["headers"] for answer in answers)
    assert caplog.text.count("connection refused") == 1 and "Traceback" not in caplog.text


def test_a_webhook_body_late_on_the_loop_gets_408_and_the_pool_a_late_receive(monkeypatch, settings):
    from hooks import asgi, maintenance, selectors

    settings.REQUEST_BODY_TIMEOUT_SECONDS = 0  # every body is late
    monkeypatch.setattr(maintenance, "known", lambda: False)
    monkeypatch.setattr(selectors, "remembered_hook_key", lambda key: 1)  # a key this process remembers
    raised = []

    async def fallback(scope_, receive, send):
        try:
            await receive()
        except BodyTimedOut as late:
            raised.append(late)

    async def serve(scope_):
        sent = []

        async def send(message):
            sent.append(message)

        await asgi.HooksApplication(fallback=fallback)(scope_, never, send)
        return sent

    start = asyncio.run(serve(scope(headers=[(b"host", b"testserver"), (b"content-length", b"10")])))[0]
    asyncio.run(serve(scope("/webservice-k", headers=[(b"host", b"testserver"), (b"content-length", b"10")])))
    assert start["status"] == 408
    assert len(raised) == 1


def test_large_bodies_are_held_at_most_threads_at_a_time_from_their_read_to_their_row(monkeypatch):
    from hooks import asgi, maintenance, selectors, verification

    monkeypatch.setattr(maintenance, "known", lambda: False)
    monkeypatch.setattr(selectors, "automation_id_for_hook_key", lambda key, fresh=False: 1)
    monkeypatch.setattr(selectors, "check_for", lambda automation_id: verification.NOTHING)
    monkeypatch.setattr(asgi, "close_old_connections", lambda: None)
    large = scope(headers=[(b"host", b"testserver"), (b"content-length", b"70000")])
    read, stored = [], []

    async def two_large_bodies():
        committed = asyncio.Event()

        async def store(row):
            stored.append(row)
            await committed.wait()

        monkeypatch.setattr(intake.writer, "store", store)
        application = asgi.HooksApplication(fallback=None, threads=1)

        def receiving(name):
            async def receive():
                read.append(name)
                return {"type": "http.request", "body": b"x" * 70_000, "more_body": False}

            return receive

        async def send(message):
            pass

        requests = [asyncio.create_task(application(large, receiving(name), send)) for name in ("first", "second")]
        for _ in range(500):  # until a row waits to be committed
            if stored:
                break
            await asyncio.sleep(0.01)
        held = list(read)
        committed.set()
        await asyncio.gather(*requests)
        return held

    assert asyncio.run(two_large_bodies()) == ["first"]  # the second body was not read while the first was held
    assert read == ["first", "second"] and len(stored) == 2


def test_a_request_that_gave_up_before_its_row_joined_a_commit_is_never_stored(monkeypatch, sent_deliveries):
    started, let_go, committed = threading.Event(), threading.Event(), []

    def insert(rows):
        started.set()
        assert let_go.wait(10)
        committed.extend(row.body for row in rows)
        for row in rows:
            row.pk = 1

    inserts_through(monkeypatch, insert)
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 0.2)
    # One row a commit: the second waits from before the first's commit began, so it gives up before that commit's
    # own wait ends (on PostgreSQL a commit past its wait frees the writer for the rows behind it).
    monkeypatch.setattr(intake, "MAX_BATCH", 1)
    writer = intake.Writer()

    async def first_in_a_commit_then_one_behind_it():
        first = asyncio.ensure_future(writer.store(intake.Accepted(1, "POST", "/", "", "", b"first", "")))
        late = asyncio.ensure_future(writer.store(intake.Accepted(1, "POST", "/", "", "", b"late", "")))
        assert await asyncio.to_thread(started.wait, 10)
        with pytest.raises(intake.DatabaseError):  # gave up while its row waited behind the commit under way
            await late
        let_go.set()
        with pytest.raises(intake.DatabaseError):  # gave up too, but its row was in the commit: it is stored
            await first

    try:
        asyncio.run(first_in_a_commit_then_one_behind_it())
    finally:
        let_go.set()
        writer.stop()
    assert committed == [b"first"]


def test_a_second_event_loop_is_refused_while_the_first_has_a_commit_under_way(no_database, monkeypatch):
    started, let_go, insert = threading.Event(), threading.Event(), intake.statements.insert_deliveries
    inserts_through(monkeypatch, lambda rows: started.set() or let_go.wait(10) and insert(rows))
    writer = intake.Writer()
    first_loop = asyncio.new_event_loop()
    first = threading.Thread(target=first_loop.run_until_complete, args=(writer.store(a_row()),))
    first.start()
    try:
        assert started.wait(10)
        with pytest.raises(RuntimeError, match="one event loop"):  # its futures could not be woken from there
            asyncio.run(writer.store(a_row()))
    finally:
        let_go.set()
        first.join(10)
        first_loop.close()
        writer.stop()
