"""Webhook URLs answered on an event loop: the hooks process (config/asgi.py, gunicorn's asgi worker).

Under gunicorn's threaded worker a webhook costs about eleven thread switches:
the poller hands the request to a thread, the thread hands its row to the
writer, the writer wakes it again, and each woken thread waits for the GIL
(benchmarks/RESULTS.md). Here one event loop per process parses every
request, awaits the writer's commit, and is woken once per committed batch
for all the requests in it. The answer itself is hooks.receiver.exchange(),
the same function the WSGI entry and Django's view drive.

Nothing here waits on the database on the loop's thread: maintenance mode
and hook keys are answered from the process's memory, and when that memory
has no answer (a key not seen in the last few seconds, every miss, the
maintenance switch every two seconds) the lookup runs in a thread. Every
other request (web services, the rest of the site) goes to `fallback`.

Every body, a webhook's or one for `fallback`, has until
REQUEST_BODY_TIMEOUT_SECONDS after its request arrived: a webhook's is then
answered 408, and `fallback` (a2wsgi's threads, which block while a body
trickles in) sees its read of wsgi.input raise BodyTimedOut.
"""
import asyncio
import functools
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from hooks import intake, maintenance, selectors
from hooks.exceptions import BodyError, BodyIncomplete, BodyTimedOut, BodyTooLarge
from hooks.receiver import Need, Reply, exchange
from hooks.wsgi import response_headers, webhook_key

logger = logging.getLogger("django.request")


class ClientGone(BodyIncomplete):
    """The client closed the connection before its body arrived: nobody reads the answer, and nothing is stored."""


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
        deadline = asyncio.get_running_loop().time() + settings.REQUEST_BODY_TIMEOUT_SECONDS
        environ = wsgi_environ(scope)
        key = webhook_key(environ)
        if key is None:
            return await self.fallback(scope, bounded_receive(receive, deadline), send)
        try:
            reply = await self.answer(environ, key, functools.partial(read_body, environ, receive, deadline))
        except Exception:
            logger.exception("Internal Server Error: %s", environ["PATH_INFO"], extra={"status_code": 500})
            reply = Reply(500)
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response_headers(environ, reply)]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})

    async def answer(self, environ: dict, key: str, body) -> Reply:
        """hooks.receiver.drive() with an await: the same loop, each need supplied without blocking.

        body: a coroutine function that reads the request's body.
        """
        steps = exchange(environ, key)
        supplied, error = None, None
        while True:
            try:
                need = steps.throw(error) if error else steps.send(supplied)
            except StopIteration as finished:
                return finished.value
            try:
                supplied, error = await self.supply(need, key, body), None
            except (BodyError, intake.AutomationGone) as raised:
                supplied, error = None, raised

    async def supply(self, need, key: str, body):
        if need is Need.MAINTENANCE:
            known = maintenance.known()
            return known if known is not None else await self.blocking(maintenance.active)
        if need is Need.AUTOMATION:
            remembered = selectors.remembered_hook_key(key)
            return remembered if remembered is not None else await self.blocking(selectors.automation_id_for_hook_key, key)
        if need is Need.FRESH_AUTOMATION:
            return await self.blocking(functools.partial(selectors.automation_id_for_hook_key, key, fresh=True))
        if need is Need.BODY:
            return await body()
        await intake.store_async(need)
        return None

    async def blocking(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self.executor, _as_a_request, function, *args)


def _as_a_request(function, *args):
    """Run function as Django runs a view: a broken or expired database connection is replaced first."""
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


async def read_body(environ: dict, receive, deadline: float | None = None) -> bytes:
    """The body, or BodyTooLarge as soon as it is known to pass the limit (as hooks.incoming.read_body).

    A declared Content-Length over the limit is refused before a byte is
    read; a chunked body is refused once what arrived passes the limit. A
    body still arriving at deadline (the loop's clock) raises BodyTimedOut;
    a client that leaves first, ClientGone.
    """
    limit = settings.HOOK_MAX_BODY_BYTES
    declared = environ.get("CONTENT_LENGTH", "")
    length = int(declared) if declared.isdigit() else None
    if length is not None and length > limit:
        raise BodyTooLarge()
    parts, size = [], 0
    try:
        async with asyncio.timeout_at(deadline):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BodyTooLarge()
                parts.append(chunk)
                if not message.get("more_body", False):
                    break
    except TimeoutError:
        raise BodyTimedOut() from None
    if length is not None and size != length:
        raise BodyIncomplete()
    return b"".join(parts)


def bounded_receive(receive, deadline: float):
    """receive as `fallback` gets it: each body message by the deadline or BodyTimedOut, a client gone BodyIncomplete.

    a2wsgi awaits receive from the WSGI thread that reads wsgi.input, and
    raises there what it raised, so a web service's view answers 408 or 400
    and Django answers a page's request 400. Once the body is complete,
    receive is passed through untouched.
    """
    complete = False

    async def bounded():
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
        return message

    return bounded


def wsgi_environ(scope: dict) -> dict:
    """The WSGI environ keys the webhook answer reads, from an ASGI scope, as gunicorn's WSGI worker sets them.

    No wsgi.input: the body comes from the ASGI messages. PATH_INFO is the
    decoded path's UTF-8 bytes read as latin-1, as PEP 3333 has it.
    """
    server = scope.get("server") or ("", 0)
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", "").encode().decode("latin-1"),
        "PATH_INFO": scope["path"].encode().decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": server[0] or "",
        "SERVER_PORT": str(server[1] or ""),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "wsgi.url_scheme": scope.get("scheme", "http"),
    }
    if client := scope.get("client"):
        environ["REMOTE_ADDR"] = client[0]
    for raw_name, raw_value in scope["headers"]:
        if b"_" in raw_name:  # as gunicorn's WSGI worker: X_Hook_Secret must not pass for X-Hook-Secret
            continue
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = "HTTP_" + name
        environ[name] = f"{environ[name]},{value}" if name in environ else value
    return environ


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            # In-flight requests have had their answers; what the writer committed still goes to the broker.
            await asyncio.get_running_loop().run_in_executor(None, intake.dispatcher.flush)
            await send({"type": "lifespan.shutdown.complete"})
            return

