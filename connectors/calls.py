"""An app's operation performed as one HTTP call, as the catalog's internal fields describe it.

An operation names its endpoint, method and request template; its app's
auth_config says where a connection's credential goes (docs/connections.md,
"The connector runtime"). The call is the HTTP step's: the same address
guard (automations/outbound.py, HTTP_STEP_ALLOW_PRIVATE), one deadline for
the whole call, and the body read no further than the HTTP step reads it.
A 429 or a 5xx is tried again within that deadline, after the wait the app
asks for; an answer that stays an error fails with the app's name, its
status and its own message.
"""

import email.utils
import json
import re
import time
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

import httpx
from django.conf import settings

from automations import outbound, paths
from automations.steps import StepFailed
from automations.steps.http_request import decoded_body, read_limited

MAX_ATTEMPTS = 3
FIRST_BACKOFF_SECONDS = 1.0
# Asked again whatever the method: the app says it did not act (too many requests, not available now).
NOT_ACTED = frozenset({429, 503})
# Asked again only for a method whose repeat changes nothing more: another 5xx may come after the app acted.
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
BODYLESS = frozenset({"GET", "HEAD", "DELETE"})
MESSAGE_CHARS = 300
PLACEHOLDER = "{{api_key}}"  # where the credential goes, in the app's auth_config
_PLACEHOLDER = re.compile(r"\{\{\s*(" + paths.PATH + r")\s*\}\}")


class CallFailed(Exception):
    """The operation did not succeed; the message names the app, and its status and message when it answered.

    output: the app's answer ({status, headers, body}) when there was one, for the run's record.
    """

    def __init__(self, message: str, output: dict | None = None):
        super().__init__(message)
        self.output = output


@dataclass(frozen=True)
class Operation:
    """What a call needs of the catalog: the app's name and auth, the operation's internal fields."""

    app_name: str
    method: str
    endpoint: str
    template: object = None
    auth_type: str = "none"
    auth_config: dict = field(default_factory=dict)


def operation_of(app, operation) -> Operation:
    return Operation(
        app_name=app.name,
        method=(operation.http_method or "POST").upper(),
        endpoint=operation.endpoint,
        template=operation.request_template or None,
        auth_type=app.auth_type,
        auth_config=app.auth_config or {},
    )


def perform(operation: Operation, *, credential: str | None, data: dict, seconds: float) -> dict:
    """The app's answer, {status, headers, body}, to the operation with data as its input; CallFailed otherwise.

    data fills the endpoint's and the template's {{ input.name }} places. The credential is placed as the app's
    auth_config says and appears in no message and no output.
    """
    url = _endpoint(operation, data)
    request = {"method": operation.method, "url": url, "headers": {"Accept": "application/json"}, "params": {}}
    rendered = paths.render(operation.template, {"input": data}) if operation.template is not None else None
    if rendered is not None and operation.method in BODYLESS:
        if not isinstance(rendered, dict):
            raise CallFailed(f"{operation.app_name}: the operation's request template is not an object")
        request["params"] = {key: paths.as_text(value) for key, value in rendered.items() if value is not None}
    elif rendered is not None:
        request["json"] = rendered
    _place(operation, credential, request)
    deadline = time.monotonic() + seconds
    for attempt in range(1, MAX_ATTEMPTS + 1):
        output = _call(operation, request, deadline)
        output = _masked(output, credential)
        status = output["status"]
        if status < 400:
            return output
        again = status in NOT_ACTED or (status >= 500 and operation.method in IDEMPOTENT)
        wait = _wait(output["headers"].get("retry-after"), attempt)
        if not again or attempt == MAX_ATTEMPTS or time.monotonic() + wait >= deadline:
            said = _refusal(operation, output, wait if again and attempt < MAX_ATTEMPTS else None)
            raise CallFailed(said.replace(credential, "…") if credential else said, output)  # an app may echo it
        time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _call(operation: Operation, request: dict, deadline: float) -> dict:
    left = deadline - time.monotonic()
    failed = f"{operation.app_name}: {operation.method} {_shown(request['url'])} failed"
    if left <= 0:
        raise CallFailed(f"{failed}: no time left")
    try:
        with (
            outbound.client(deadline=deadline, allow_private=settings.HTTP_STEP_ALLOW_PRIVATE, timeout=left) as client,
            client.stream(**request) as response,
        ):
            content = read_limited(response)
    except outbound.AddressRefused as refused:
        raise CallFailed(f"{operation.app_name}: {refused}") from None
    except httpx.TimeoutException:
        raise CallFailed(f"{failed}: no complete answer within {max(left, 0):.3g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:
        raise CallFailed(f"{failed}: {error.__class__.__name__}") from None
    except StepFailed as refused:  # the HTTP step's own refusal: a response too large
        raise CallFailed(f"{operation.app_name}: {refused}") from None
    return {"status": response.status_code, "headers": dict(response.headers), "body": decoded_body(response, content)}


def _masked(output: dict, credential: str | None) -> dict:
    """The answer as a run may keep it: a credential the app echoed back is replaced, wherever it stands."""
    if not credential:
        return output
    text, needle = json.dumps(output), json.dumps(credential)[1:-1]
    return json.loads(text.replace(needle, "…")) if needle in text else output


def _endpoint(operation: Operation, data: dict) -> str:
    """The endpoint with each {{ input.name }} filled, percent-encoded: a value never adds a path segment or a query."""
    context = {"input": data}
    url = _PLACEHOLDER.sub(
        lambda match: quote(paths.as_text(paths.resolve(match[1], context)), safe=""), operation.endpoint
    )
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        raise CallFailed(f"{operation.app_name}: the operation's endpoint is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallFailed(f"{operation.app_name}: the operation's endpoint is not an http(s) URL")
    return url


def _place(operation: Operation, credential: str | None, request: dict) -> None:
    """Put the credential where the app reads it, as its auth_config's "credential" says; a bearer token if silent.

    {"credential": {"headers": {"X-Api-Key": "{{api_key}}"}, "query": {"key": "{{api_key}}"}}}: each value with
    {{api_key}} replaced by the connection's key or token, as the test_request of a key writes it.
    """
    if operation.auth_type == "none" or not credential:
        return
    where = operation.auth_config.get("credential") if isinstance(operation.auth_config, dict) else None
    if not isinstance(where, dict) or not (where.get("headers") or where.get("query")):
        where = {"headers": {"Authorization": "Bearer " + PLACEHOLDER}}
    for part, target in (("headers", request["headers"]), ("query", request["params"])):
        values = where.get(part)
        for name, value in values.items() if isinstance(values, dict) else ():
            target[str(name)] = str(value).replace(PLACEHOLDER, credential)


def _wait(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before asking again: the app's Retry-After (seconds or a date), else 1 s, then 2 s."""
    if retry_after:
        text = retry_after.strip()
        if text.isascii() and text.isdigit():
            return float(min(int(text), 86_400))
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, min(when.timestamp() - time.time(), 86_400.0))
    return FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1)


def _refusal(operation: Operation, output: dict, wait: float | None) -> str:
    said = _message_of(output["body"])
    text = f"{operation.app_name} answered {output['status']}" + (f": {said}" if said else "")
    if wait is not None:
        text += f" (it asked to wait {wait:g} s, longer than the step has left)"
    return text


def _message_of(body) -> str:
    """The app's own words: a JSON error's message, else the start of its text."""
    found = None
    if isinstance(body, dict):
        for name in ("message", "error_description", "detail", "error", "errors"):
            value = body.get(name)
            if isinstance(value, dict):
                value = value.get("message") or value.get("detail")
            if isinstance(value, list) and value:
                first = value[0]
                value = first.get("message") if isinstance(first, dict) else first
            if isinstance(value, str) and value.strip():
                found = value
                break
    elif isinstance(body, str):
        found = body
    if not found:
        return ""
    cleaned = " ".join("".join(c if c.isprintable() else " " for c in found).split())
    return cleaned[:MESSAGE_CHARS] + ("…" if len(cleaned) > MESSAGE_CHARS else "")


def _shown(url: str) -> str:
    """The URL as a message may show it: without its query, where a credential may be."""
    return url.split("?", 1)[0][:200]
