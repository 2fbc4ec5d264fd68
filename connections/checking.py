"""The test call that checks a pasted key against its app, as the app's auth_config "test_request" describes it.

The call goes out as an HTTP request step's does (automations/outbound.py):
one DNS answer, internal addresses refused unless HTTP_STEP_ALLOW_PRIVATE is
on, no redirects, one deadline (CONNECTION_CHECK_TIMEOUT_SECONDS). Anyone
who may connect could otherwise make the service call its own network.

    "auth_config": {"test_request": {
        "method": "GET",
        "url": "https://api.acorn.example/v1/me",
        "headers": {"Authorization": "Bearer {{api_key}}"},
        "query": {}
    }}

`{{api_key}}` is replaced by the key in the URL, header values and query
values; a test_request that names it nowhere sends `Authorization: Bearer
{key}`. Any 2xx accepts the key; anything else refuses it, with the app's
own message when its body carries one.
"""

import json
import time

import httpx
from django.conf import settings
from django.utils.translation import gettext as _

from automations import jsonsafe, outbound

PLACEHOLDER = "{{api_key}}"
MESSAGE_FIELDS = ("message", "error_description", "error", "detail", "title")
MAX_MESSAGE = 300
READ_AT_MOST = 64 * 1024


class Refused(Exception):
    """The key was not accepted; its message is in the owner's words, with the app's own when it gave one."""


def test_request_of(app) -> dict | None:
    """The app's test call, or None when its catalog entry defines none (the key is then saved unchecked)."""
    request = (app.auth_config or {}).get("test_request")
    return request if isinstance(request, dict) and isinstance(request.get("url"), str) else None


def check_key(*, app, key: str) -> bytes | None:
    """Call the app's test_request with key; Refused when it does not answer 2xx. Returns the answer (its first
    READ_AT_MOST bytes), from which the connection's account is read (connections/routing.py); None without a
    test_request.
    """
    described = test_request_of(app)
    if described is None:
        return None
    request = _request(described, key)
    limit = float(settings.CONNECTION_CHECK_TIMEOUT_SECONDS)
    try:
        with (
            outbound.client(
                deadline=time.monotonic() + limit, allow_private=settings.HTTP_STEP_ALLOW_PRIVATE, timeout=limit
            ) as client,
            client.stream(**request) as response,
        ):
            body = _read(response)
    except outbound.AddressRefused:
        raise Refused(
            _("%(app)s's address is inside this service's network, where calls are not allowed.") % {"app": app.name}
        ) from None
    except httpx.TimeoutException:
        raise Refused(
            _("%(app)s did not answer within %(seconds)d seconds. Try again later.")
            % {"app": app.name, "seconds": limit}
        ) from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError):
        raise Refused(_("%(app)s could not be reached. Try again later.") % {"app": app.name}) from None
    if 200 <= response.status_code < 300:
        return body
    message = _message(body, key)
    values = {"app": app.name, "status": response.status_code, "message": message}
    if response.status_code in (401, 403):
        reason = _("%(app)s refused the key (%(status)d).") % values
    else:
        reason = _("%(app)s answered %(status)d to the test call.") % values
    if message:
        said = _("It said: %(message)s") % values
        reason = f"{reason} {said}"
    raise Refused(reason)


def _request(described: dict, key: str) -> dict:
    def put(text) -> str:
        return str(text).replace(PLACEHOLDER, key)

    headers = {str(name): put(value) for name, value in (described.get("headers") or {}).items()}
    query = {str(name): put(value) for name, value in (described.get("query") or {}).items()}
    named = PLACEHOLDER in json.dumps([described.get("url"), described.get("headers"), described.get("query")])
    if not named:
        headers["Authorization"] = f"Bearer {key}"
    return {
        "method": str(described.get("method") or "GET").upper(),
        "url": put(described["url"]),
        "headers": headers,
        "params": query,
    }


def _read(response: httpx.Response) -> bytes:
    content = bytearray()
    for chunk in response.iter_bytes():
        content += chunk
        if len(content) >= READ_AT_MOST:
            break
    return bytes(content[:READ_AT_MOST])


def _message(body: bytes, key: str) -> str:
    """The app's own words from its answer (a JSON message field, else short text), the key never echoed."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        document = jsonsafe.loads(text)  # bounded: an answer nested thousands deep is text, not a RecursionError
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        found = next((document[f] for f in MESSAGE_FIELDS if isinstance(document.get(f), str) and document[f]), None)
        if found is None and isinstance(document.get("error"), dict):
            inner = document["error"]
            found = next((inner[f] for f in MESSAGE_FIELDS if isinstance(inner.get(f), str) and inner[f]), None)
        text = found or ""
    elif document is not None or text.startswith("<"):
        text = ""  # a bare value, or an HTML error page: nothing a person reads well
    text = " ".join(text.split())
    if key:
        text = text.replace(key, "…")
    return text[:MAX_MESSAGE] + ("…" if len(text) > MAX_MESSAGE else "")
