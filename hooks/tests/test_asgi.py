"""The parts of the event-loop entry (hooks/asgi.py) that are its own, in-process.

The scope read as an environ, the body read from ASGI messages under the
size limit, the writer waking a loop, errors and hand-overs. Through a real
server: test_hooks_process.py.
"""
import asyncio
import logging

import pytest

from hooks import intake
from hooks.asgi import ClientGone, bounded_receive, read_body, wsgi_environ
from hooks.exceptions import BodyIncomplete, BodyTimedOut, BodyTooLarge


def scope(path="/automation-k", *, method="POST", headers=(), query=b"", root_path=""):
    return {"type": "http", "method": method, "path": path, "root_path": root_path, "query_string": query,
            "headers": list(headers), "server": ("hooks.example.com", 443), "scheme": "https",
            "client": ("203.0.113.9", 5555), "http_version": "1.1"}


def test_a_scope_reads_as_the_environ_gunicorns_wsgi_worker_would_build():
    environ = wsgi_environ(scope(
        "/automation-k/caf\u00e9", query=b"a=1&b=%C3%A9",
        headers=[(b"content-type", b"application/json"), (b"content-length", b"7"), (b"x-hook-secret", b"s"),
                 (b"accept", b"a"), (b"accept", b"b"), (b"host", b"hooks.example.com")]))
    assert environ["PATH_INFO"] == "/automation-k/caf\u00e9".encode().decode("latin-1")
    assert environ["QUERY_STRING"] == "a=1&b=%C3%A9"
    assert environ["CONTENT_TYPE"] == "application/json" and environ["CONTENT_LENGTH"] == "7"
    assert environ["HTTP_X_HOOK_SECRET"] == "s" and environ["HTTP_ACCEPT"] == "a,b"
    assert environ["wsgi.url_scheme"] == "https" and environ["REMOTE_ADDR"] == "203.0.113.9"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("hooks.example.com", "443")


def test_a_header_spelled_with_underscores_does_not_pass_for_one_with_dashes():
    environ = wsgi_environ(scope(headers=[(b"x_hook_secret", b"forged")]))
    assert "HTTP_X_HOOK_SECRET" not in environ


def messages(*chunks, disconnect=False):
    queue = [{"type": "http.request", "body": chunk, "more_body": n < len(chunks) - 1} for n, chunk in enumerate(chunks)]
    if disconnect:
        queue[-1:] = [{"type": "http.request", "body": chunks[0], "more_body": True}, {"type": "http.disconnect"}]
    received = []

    async def receive():
        received.append(queue[len(received)])
        return received[-1]

    return receive, received


def test_a_body_arriving_in_messages_is_joined():
    receive, _ = messages(b"ab", b"cd", b"")
    assert asyncio.run(read_body({}, receive)) == b"abcd"


def test_a_declared_length_over_the_limit_is_refused_before_a_message_is_read(settings):
    settings.HOOK_MAX_BODY_BYTES = 10
    receive, received = messages(b"x" * 11)
    with pytest.raises(BodyTooLarge):
        asyncio.run(read_body({"CONTENT_LENGTH": "11"}, receive))
    assert received == []


def test_a_chunked_body_is_refused_once_it_passes_the_limit(settings):
    settings.HOOK_MAX_BODY_BYTES = 10
    receive, received = messages(b"x" * 6, b"x" * 6, b"x" * 6)
    with pytest.raises(BodyTooLarge):
        asyncio.run(read_body({}, receive))
    assert len(received) == 2


def test_a_client_that_leaves_mid_body_is_noticed():
    receive, _ = messages(b"x", disconnect=True)
    with pytest.raises(ClientGone):
        asyncio.run(read_body({"CONTENT_LENGTH": "5"}, receive))


async def never():
    """A client that sends nothing more."""
    await asyncio.get_running_loop().create_future()


def test_a_body_still_arriving_at_its_deadline_is_timed_out():
    async def read_late():
        return await read_body({"CONTENT_LENGTH": "10"}, never, asyncio.get_running_loop().time())

    with pytest.raises(BodyTimedOut):
        asyncio.run(read_late())


def test_a_body_shorter_than_its_declared_length_is_incomplete():
    receive, _ = messages(b"x" * 5)
    with pytest.raises(BodyIncomplete):
        asyncio.run(read_body({"CONTENT_LENGTH": "10"}, receive))


def test_the_django_pool_gets_a_body_by_its_deadline_and_never_a_cut_off_one():
    async def receive_all(receive):
        return [await receive() for _ in range(2)]

    with pytest.raises(BodyTimedOut):
        asyncio.run(receive_all(bounded_receive(never, deadline=0.0)))
    receive, _ = messages(b"x", disconnect=True)
    with pytest.raises(BodyIncomplete):
        asyncio.run(receive_all(bounded_receive(receive, deadline=float("inf"))))
    # Once the body is whole, receive is passed through: a disconnect then is the caller's to read.
    receive_after = iter([{"type": "http.request", "body": b"x", "more_body": False}, {"type": "http.disconnect"}])

    async def whole_then_gone():
        return next(receive_after)

    assert asyncio.run(receive_all(bounded_receive(whole_then_gone, deadline=float("inf"))))[1] == {"type": "http.disconnect"}


def test_the_writer_wakes_an_event_loop_once_for_all_its_requests_in_a_batch():
    async def batch_of_three():
        loop = asyncio.get_running_loop()
        calls = []
        original = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda callback, *args: calls.append(callback) or original(callback, *args)
        tickets = [intake._Ticket(None, loop.create_future()) for _ in range(3)]
        lock_ticket = intake._Ticket(None)
        await loop.run_in_executor(None, intake._release, [*tickets, lock_ticket])
        await asyncio.gather(*(ticket.done for ticket in tickets))
        return calls, lock_ticket

    calls, lock_ticket = asyncio.run(batch_of_three())
    assert calls.count(intake._resolve) == 1
    assert lock_ticket.done.acquire(blocking=False)  # a thread's ticket in the same batch is released too


def test_a_ticket_that_timed_out_is_not_resolved_again():
    async def timed_out():
        loop = asyncio.get_running_loop()
        ticket = intake._Ticket(None, loop.create_future())
        ticket.done.cancel()
        await loop.run_in_executor(None, intake._release, [ticket])
        await asyncio.sleep(0)
        return ticket.done.cancelled()

    assert asyncio.run(timed_out())


def test_a_request_whose_row_is_not_committed_in_time_gets_an_error(monkeypatch):
    monkeypatch.setattr(intake, "COMMIT_WAIT_SECONDS", 0.05)
    stalled = intake._Writer()
    monkeypatch.setattr(stalled, "_ensure_thread", lambda: None)  # no writer thread: nothing is ever committed

    with pytest.raises(intake.DatabaseError, match="not committed in time"):
        asyncio.run(stalled.store_async(intake.Accepted(1, "POST", "/", "", "", b"", "")))


def test_a_row_that_failed_to_store_raises_its_error_in_the_request():
    async def failed():
        writer = intake._Writer()
        writer._ensure_thread = lambda: None
        task = asyncio.ensure_future(writer.store_async(intake.Accepted(1, "POST", "/", "", "", b"", "")))
        await asyncio.sleep(0)
        ticket = writer._queue.get_nowait()
        ticket.error = intake.AutomationGone()
        await asyncio.get_running_loop().run_in_executor(None, intake._release, [ticket])
        await task

    with pytest.raises(intake.AutomationGone):
        asyncio.run(failed())


def call(application, scope_):
    """Run one request through an ASGI application in-process; its start message and body."""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(application(scope_, receive, send))
    return sent


def test_an_unexpected_error_is_a_logged_500_with_the_usual_headers(monkeypatch, caplog):
    from hooks import asgi

    def broken(environ, key):
        raise RuntimeError("boom")
        yield  # a generator, as exchange() is

    monkeypatch.setattr(asgi, "exchange", broken)
    logger = logging.getLogger("django.request")  # it does not propagate to the root logger caplog watches
    logger.addHandler(caplog.handler)
    try:
        start, body = call(asgi.HooksApplication(fallback=None), scope(headers=[(b"host", b"testserver")]))
    finally:
        logger.removeHandler(caplog.handler)
    assert (start["status"], body["body"]) == (500, b"")
    assert (b"x-frame-options", b"DENY") in [(name.lower(), value) for name, value in start["headers"]]
    assert "Internal Server Error" in caplog.text


def test_other_paths_and_hosts_go_to_the_fallback():
    from hooks import asgi

    seen = []

    async def fallback(scope_, receive, send):
        seen.append(scope_["path"])

    application = asgi.HooksApplication(fallback=fallback)
    call(application, scope("/healthz", headers=[(b"host", b"testserver")]))
    call(application, scope("/automation-k", headers=[(b"host", b"elsewhere.example.com")]))
    assert seen == ["/healthz", "/automation-k"]


def test_the_loop_reads_maintenance_mode_from_memory_and_asks_a_thread_only_when_a_check_is_due(settings):
    from hooks import maintenance

    settings.MAINTENANCE_MODE = True
    assert maintenance.known() is True  # the setting needs no query
    settings.MAINTENANCE_MODE = False
    maintenance.reset()
    assert maintenance.known() is None  # due: the entry runs maintenance.active() in a thread
    maintenance._switch.set("active", True, seconds=maintenance.CHECK_SECONDS)  # as a thread's answer leaves it
    assert maintenance.known() is True


def test_a_database_that_is_down_during_a_lookup_is_a_logged_500_and_the_loop_goes_on(monkeypatch, caplog):
    from django.db import OperationalError

    from hooks import asgi, maintenance, selectors

    def down(key):
        raise OperationalError("connection refused")

    monkeypatch.setattr(maintenance, "known", lambda: False)
    monkeypatch.setattr(selectors, "remembered_hook_key", lambda key: None)  # not remembered: a thread asks the database
    monkeypatch.setattr(selectors, "automation_id_for_hook_key", down)
    monkeypatch.setattr(asgi, "close_old_connections", lambda: None)
    logger = logging.getLogger("django.request")
    logger.addHandler(caplog.handler)
    try:
        application = asgi.HooksApplication(fallback=None)
        answers = [call(application, scope(headers=[(b"host", b"testserver")]))[0]["status"] for _ in range(2)]
    finally:
        logger.removeHandler(caplog.handler)
    assert answers == [500, 500]
    assert "connection refused" in caplog.text


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
