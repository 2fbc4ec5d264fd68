"""Webhook URLs answered on an event loop: the hooks process (config/asgi.py, gunicorn's asyncio worker).

Under gunicorn's threaded worker a webhook cost about eleven thread switches
(benchmarks/RESULTS.md). Here one event loop per process reads every webhook,
asks hooks/answers.py's rules (Django's view follows them too), awaits the
writer's commit (hooks/intake.py), and is woken once per committed batch.
Nothing waits on the database on the loop's thread: what the process's
memory cannot answer runs in a small thread pool. Every other request, and a
webhook Django would not hand to its view as it is (hooks/routes.py), goes
to `fallback`: Django, in a2wsgi's threads. Every body has until
REQUEST_BODY_TIMEOUT_SECONDS after its request arrived: a webhook's is then
answered 408, and `fallback` sees its read raise BodyTimedOut.
"""

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from hooks import answers, intake, maintenance, routes, selectors, services
from hooks.exceptions import BodyError, BodyIncomplete, BodyTimedOut, BodyTooLarge
from hooks.incoming import Incoming

logger = logging.getLogger("django.request")
PREFIXES = ("/automation-", "/webhook/automation-")


class HooksApplication:
    """An ASGI application: webhook requests here, all others to the ASGI application `fallback`."""

    def __init__(self, fallback, *, threads: int = 8):
        self.fallback = fallback
        # For the lookups memory cannot answer; each thread keeps its own database connection.
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="hook-lookup")

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["type"] != "http":
            return await self.fallback(scope, receive, send)
        receive = bounded(receive, asyncio.get_running_loop().time() + settings.REQUEST_BODY_TIMEOUT_SECONDS)
        path = scope["path"]
        if not path.startswith(PREFIXES) or scope.get("root_path"):
            return await self.fallback(scope, receive, send)
        headers = _headers(scope)
        route = routes.key(scope, headers)
        if (django_headers := routes.known(route)) is None:
            django_headers = await self.blocking(routes.learn, route, scope, headers)
        if django_headers is False:
            return await self.fallback(scope, receive, send)
        key = path.partition("automation-")[2]
        try:
            reply = await self.answer(scope["method"], "" if "/" in key else key, path, scope, headers, receive)
        except Exception:
            logger.exception("Internal Server Error: %s", path, extra={"status_code": 500})
            reply = answers.FAILED
        sent = [
            *django_headers,
            *((name.encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers),
            (b"content-length", str(len(reply.body)).encode()),
        ]
        if reply.content_type:
            sent.append((b"content-type", reply.content_type.encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": sent})
        await send({"type": "http.response.body", "body": reply.body})

    async def answer(self, method: str, key: str, path: str, scope: dict, headers: dict, receive) -> answers.Reply:
        """The rules of hooks/answers.py, as hooks/views.py follows them, each lookup without blocking the loop."""
        active = maintenance.known()
        if active if active is not None else await self.blocking(maintenance.active):
            return answers.MAINTENANCE
        if method not in answers.HOOK_METHODS:
            return answers.WRONG_METHOD
        declared = answers.declared_length(headers.get("content-length"), headers.get("transfer-encoding"))
        if answers.fresh_lookup(method, declared):
            automation_id = await self.blocking(_fresh_lookup, key)
        elif (automation_id := selectors.remembered_hook_key(key)) is None:
            automation_id = await self.blocking(selectors.automation_id_for_hook_key, key)
        if automation_id is None:
            return answers.MISS
        if not answers.reads_body(method):
            return answers.without_body(method, headers.get("access-control-request-headers"))
        try:
            body = await read_body(receive, declared, settings.HOOK_MAX_BODY_BYTES)
        except BodyError as refused:  # nothing is stored; a client that left never reads the answer
            return answers.refused(refused.status_code)
        if handshake := answers.handshake(headers.get("x-hook-secret"), body):
            return handshake
        query_string = scope.get("query_string", b"").decode("latin-1")
        incoming = Incoming(method, path, query_string, headers.get("content-type", ""), body)
        row = services.new_delivery(automation_id=automation_id, incoming=incoming)
        try:
            await intake.store_async(row)
        except intake.AutomationGone:
            selectors.forget_hook_key(key)
            return answers.MISS
        return answers.accepted(method, row.public_id)

    async def blocking(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self.executor, _as_a_request, function, *args)


def _fresh_lookup(key: str) -> int | None:
    return selectors.automation_id_for_hook_key(key, fresh=True)


def _as_a_request(function, *args):
    """Run function as Django runs a view: a broken or expired database connection is replaced first."""
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


def _headers(scope: dict) -> dict[str, str]:
    """The request's headers by lower-case name, repeats joined with commas, as gunicorn's WSGI worker reads them.

    A name spelled with an underscore is dropped, as gunicorn drops it, so that
    X_Hook_Secret cannot pass for X-Hook-Secret.
    """
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        if b"_" not in raw_name:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]},{value}" if name in headers else value
    return headers


async def read_body(receive, declared: int | None, limit: int) -> bytes:
    """The body from receive (bounded()), or BodyTooLarge as soon as it is known to pass the limit.

    A declared length over the limit is refused before a message is read; a
    chunked body (declared None) once what arrived passes the limit. Fewer
    bytes than declared is BodyIncomplete.
    """
    if declared is not None and declared > limit:
        raise BodyTooLarge()
    parts, size, more = [], 0, True
    while more:
        message = await receive()
        parts.append(chunk := message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        more = message.get("more_body", False)
    if declared is not None and size != declared:
        raise BodyIncomplete()
    return b"".join(parts)


def bounded(receive, deadline: float):
    """receive with each body message by deadline (the loop's clock) or BodyTimedOut, a client gone BodyIncomplete.

    `fallback` gets it too: a2wsgi awaits receive from the WSGI thread that
    reads wsgi.input and raises there what it raised, so a web service's view
    answers 408 or 400, and Django answers a page's request 400. Once the body
    is complete, receive is passed through untouched.
    """
    complete = False

    async def bounded_receive():
        nonlocal complete
        if complete:
            return await receive()
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise BodyTimedOut() from None
        if message["type"] == "http.disconnect":
            raise BodyIncomplete()
        complete = not message.get("more_body", False)
        # A server's receive can swallow the timeout's cancellation when a chunk arrives in the same instant
        # (asyncio.wait_for does, in Python 3.11): the next receive would then wait with no deadline at all.
        if not complete and asyncio.get_running_loop().time() >= deadline:
            raise BodyTimedOut()
        return message

    return bounded_receive


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            # In-flight requests have had their answers; what the writer committed still goes to the broker.
            await asyncio.get_running_loop().run_in_executor(None, intake.writer.stop)
            await send({"type": "lifespan.shutdown.complete"})
            return
