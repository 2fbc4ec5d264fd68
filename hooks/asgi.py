"""The hooks process's ASGI application: webhooks answered on its event loop, every other request by Django.

docs/webhooks.md, "The hooks process: webhooks on an event loop".
"""

import asyncio
import contextlib
import functools
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.core.signals import setting_changed
from django.db import close_old_connections

from connections import routing
from edge import bodies, clients
from edge.bodies import BodyError
from edge.headers import security_headers
from edge.outages import outage
from edge.replies import Reply
from hooks import answers, intake, maintenance, routes, selectors, services, signatures, verification
from hooks.incoming import Incoming

logger = logging.getLogger("django.request")
WEBHOOK_PREFIXES = ("/automation-", "/webhook/automation-")
# A connection's URL and an app's shared endpoint (docs/connections.md): stored the same way, fanned out by a worker.
CONNECTION_PREFIX, APP_PREFIX = "/connection-", "/app-"
PREFIXES = (*WEBHOOK_PREFIXES, CONNECTION_PREFIX, APP_PREFIX)
_UNLIMITED = contextlib.nullcontext()


class HooksApplication:
    """An ASGI application: webhook requests here, all others to the ASGI application `fallback`."""

    def __init__(self, fallback, *, threads: int = 8):
        self.fallback = fallback
        # For the lookups memory cannot answer; each thread keeps its own database connection.
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="hook-lookup")
        # Large or chunked bodies held at once, read to stored, as a web process's threads hold at most theirs.
        self.large_bodies = asyncio.Semaphore(threads)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["type"] == "http":  # every body, Django's included, has until its deadline
            receive = bodies.bounded(receive, asyncio.get_running_loop().time() + settings.REQUEST_BODY_TIMEOUT_SECONDS)
        if scope["type"] != "http" or not scope["path"].startswith(PREFIXES) or scope.get("root_path"):
            return await self.fallback(scope, receive, send)
        headers = _headers(scope)
        try:
            secure = routes.answered_here(scope, headers)
        except Exception:  # settings Django could not read either (a malformed SECURE_PROXY_SSL_HEADER, say)
            logger.exception("Internal Server Error: %s", scope["path"], extra={"status_code": 500})
            return await _respond(send, answers.FAILED, secure=False)
        if secure is None:
            return await self.fallback(scope, receive, send)
        try:
            reply = await self.answer(scope, headers, receive)
        except Exception as error:
            if outage.is_outage(error):  # nothing was stored: the sender sends it again later
                outage.refused_one(error)
                reply = answers.DATABASE_UNAVAILABLE
            else:
                logger.exception("Internal Server Error: %s", scope["path"], extra={"status_code": 500})
                reply = answers.FAILED
        await _respond(send, reply, secure=secure)

    async def answer(self, scope: dict, headers: dict, receive) -> Reply:
        """The rules of hooks/answers.py, without blocking the loop."""
        method, path = scope["method"], scope["path"]
        if path.startswith(WEBHOOK_PREFIXES):
            purpose, key = selectors.WEBHOOK, path.partition("automation-")[2]
        elif path.startswith(CONNECTION_PREFIX):
            purpose, key = selectors.CONNECTION_HOOK, path[len(CONNECTION_PREFIX) :]
        else:
            purpose, key = selectors.APP_HOOK, path[len(APP_PREFIX) :]
        key = "" if "/" in key else key  # a malformed key is a miss like any other
        active = maintenance.known()
        if active if active is not None else await self.blocking(maintenance.active):
            return answers.MAINTENANCE
        if method not in answers.HOOK_METHODS:
            return answers.WRONG_METHOD
        declared = bodies.declared(headers.get("content-length"), headers.get("transfer-encoding"))
        fresh = answers.fresh_lookup(method, declared)
        if purpose != selectors.WEBHOOK:
            return await self.answer_routed(scope, headers, receive, purpose, key, declared, fresh)
        if (automation_id := None if fresh else selectors.remembered_hook_key(key)) is None:
            automation_id = await self.blocking(selectors.automation_id_for_hook_key, key, fresh)
        if automation_id is None:
            return answers.MISS
        if not answers.reads_body(method):
            return answers.without_body(method, headers.get("access-control-request-headers"))
        async with self.large_bodies if fresh else _UNLIMITED:  # a large body is held from its read to its row
            try:
                body = await bodies.read_messages(receive, declared, settings.HOOK_MAX_BODY_BYTES)
            except BodyError as refused:  # nothing is stored; a client that left never reads the answer
                return Reply(refused.status_code)
            if handshake := answers.handshake(headers.get("x-hook-secret"), body):
                return handshake
            query_string = scope.get("query_string", b"").decode("latin-1")
            row = services.new_delivery(
                automation_id=automation_id,
                incoming=Incoming(method, path, query_string, headers.get("content-type", ""), body),
            )
            try:
                if (check := verification.remembered(automation_id)) is None:  # forgotten since the lookup
                    check = await self.blocking(selectors.check_for, automation_id)
                if check is not verification.NOTHING:
                    row.replay_id = self.verify(check, scope, headers, row)
                await intake.writer.store(row)
            except intake.AutomationGone:
                selectors.forget_hook_key(key)
                return answers.MISS
            except (signatures.Refused, intake.Replayed) as error:
                refusal = error if isinstance(error, signatures.Refused) else signatures.Refused(signatures.REPLAYED)
                await self.blocking(
                    verification.record_refusal,
                    automation_id=automation_id,
                    reason=refusal.reason,
                    method=method,
                    path=row.path,
                    address=_client_address(scope, headers),
                    body_size=len(body),
                )
                return answers.refused(refusal)
            outage.answered()
        return answers.accepted(row.public_id)

    async def answer_routed(self, scope, headers, receive, purpose: str, key: str, declared, fresh: bool) -> Reply:
        """A connection's URL or an app's shared endpoint: answered as an automation's webhook URL is, the row
        stored by the same writer before the 200, with no verification (a URL of many automations has none of
        its own); a worker fans it out (hooks/deliveries.py)."""
        method = scope["method"]
        if (routed := None if fresh else selectors.remembered_routed_target(purpose, key)) is None:
            routed = await self.blocking(selectors.routed_target, purpose, key, fresh)
        if routed is None:
            return answers.MISS
        if not answers.reads_body(method):
            return answers.without_body(method, headers.get("access-control-request-headers"))
        async with self.large_bodies if fresh else _UNLIMITED:
            try:
                body = await bodies.read_messages(receive, declared, settings.HOOK_MAX_BODY_BYTES)
            except BodyError as refused:
                return Reply(refused.status_code)
            if handshake := answers.handshake(headers.get("x-hook-secret"), body):
                return handshake
            query_string = scope.get("query_string", b"").decode("latin-1")
            incoming = Incoming(method, scope["path"], query_string, headers.get("content-type", ""), body)
            if purpose == selectors.CONNECTION_HOOK:
                row = services.new_delivery(connection_id=routed.target_id, incoming=incoming)
            else:
                account = routing.account_in_headers(routed.header, headers) if routed.header else ""
                row = services.new_delivery(app_id=routed.target_id, account=account, incoming=incoming)
            try:
                await intake.writer.store(row)
            except intake.AutomationGone:
                selectors.forget_key(purpose, key)
                return answers.MISS
            outage.answered()
        return answers.accepted(row.public_id)

    @staticmethod
    def verify(check: signatures.Check, scope: dict, headers: dict, row: intake.Accepted) -> str | None:
        """The row's replay id once its address and signature pass its URL's check; raises signatures.Refused."""
        if not signatures.allowed(check, _client_address(scope, headers)):
            raise signatures.Refused(signatures.ADDRESS)
        return signatures.verify(check, headers, row.body, row.body_digest, now=time.time())

    async def blocking(self, function, *args, **kwargs):
        """function(*args) in the pool, as Django runs a view: a broken or expired connection is replaced first."""
        function = functools.partial(function, **kwargs) if kwargs else function
        return await asyncio.get_running_loop().run_in_executor(self.executor, _as_a_request, function, *args)


def _as_a_request(function, *args):
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


def _client_address(scope: dict, headers: dict) -> str:
    """The client's address as the rate limits see it (edge/clients.py: TRUSTED_PROXY_COUNT)."""
    peer = scope.get("client") or ("", 0)
    return clients.address_of(peer[0] or "", headers.get("x-forwarded-for", ""))


async def _respond(send, reply: Reply, *, secure: bool) -> None:
    sent = [*_security_headers(secure), *_encoded(reply.headers)]
    sent.append((b"content-length", str(len(reply.body)).encode()))
    if reply.content_type:
        sent.append((b"content-type", reply.content_type.encode()))
    await send({"type": "http.response.start", "status": reply.status, "headers": sent})
    await send({"type": "http.response.body", "body": reply.body})


@functools.cache
def _security_headers(secure: bool) -> tuple[tuple[bytes, bytes], ...]:
    return tuple(_encoded(security_headers(secure)))


setting_changed.connect(lambda **kwargs: _security_headers.cache_clear(), weak=False, dispatch_uid="hooks.asgi")


def _encoded(headers) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]  # ASGI: lower-case


def _headers(scope: dict) -> dict[str, str]:
    """The request's headers by lower-case name, repeats joined with commas, as gunicorn's WSGI worker reads them.

    The hooks process's worker has dropped names spelled with an underscore, as gunicorn's WSGI worker does
    (overrides/uvicorn_protocol.py).
    """
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]},{value}" if name in headers else value
    return headers


async def _lifespan(receive, send) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    # In-flight requests have had their answers; the ids committed since the last message go to the broker now
    # (a batch whose commit a stopped loop left unfinished is queued by the sweeper).
    intake.writer.stop()
    await send({"type": "lifespan.shutdown.complete"})
