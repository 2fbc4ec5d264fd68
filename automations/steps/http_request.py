"""HTTP request: call an outside URL; its status, headers and body are the step's output.

A status of 400 or more fails the step (and so the run, which may be
retried) unless `fail_on_error_status` is false. Addresses inside the
service's own network (loopback, private, link-local, and IPv6 addresses
that lead to one: automations/addresses.py) are refused unless
HTTP_STEP_ALLOW_PRIVATE is on: anyone who can write an automation could
otherwise read internal services through it. The name is resolved once and
the connection goes to the address checked (automations/outbound.py). The
whole request, body included, ends by one deadline, and the body is read
no further than MAX_RESPONSE_BYTES: a run must not outlast its lease nor
fill a worker's memory.
"""

import time
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from automations import jsonsafe, outbound
from automations.steps import StepFailed

KIND = "http_request"
# Its settings leave the service: it renders trigger.path as requested (automations/requested_path.py).
SENDS_OUT = True
MAX_RESPONSE_BYTES = 5 * 1024 * 1024

SCHEMA = {
    "type": "object",
    "required": ["url"],
    "not": {"required": ["json", "body"]},
    "properties": {
        "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]},
        "url": {"type": "string", "minLength": 1},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "query": {"type": "object"},
        "json": {},
        "body": {"type": "string"},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
        "fail_on_error_status": {"type": "boolean"},
    },
}


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError when out of range
    except ValueError as error:
        raise StepFailed(f"not a valid URL: {url[:200]!r} ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StepFailed(f"not an http(s) URL: {url[:200]!r}")


def _too_large() -> StepFailed:
    return StepFailed(f"the response is larger than {MAX_RESPONSE_BYTES} bytes; reading stopped there")


def read_limited(response: httpx.Response) -> bytes:
    """The body, decoded as sent (gzip and the like), failing as soon as it passes MAX_RESPONSE_BYTES."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES and "content-encoding" not in response.headers:
        raise _too_large()
    content = bytearray()
    for chunk in response.iter_bytes():
        content += chunk
        if len(content) > MAX_RESPONSE_BYTES:
            raise _too_large()
    return bytes(content)


def decoded_body(response: httpx.Response, content: bytes):
    if "json" in response.headers.get("content-type", ""):
        try:
            return jsonsafe.loads(content.decode("utf-8"))
        except ValueError:  # not JSON, not UTF-8, NaN or Infinity, or nested too deep: kept as text, as trigger bodies
            pass
    try:
        return content.decode(response.encoding or "utf-8", errors="replace")
    except (LookupError, UnicodeError):  # a charset that is no text encoding (hex, base64) or refuses "replace" (idna)
        return content.decode("utf-8", errors="replace")


def run(settings_: dict, context) -> dict:
    url = settings_["url"]
    _check_url(url)
    wanted = min(
        float(settings_.get("timeout_seconds", settings.HTTP_STEP_TIMEOUT_SECONDS)), settings.HTTP_STEP_TIMEOUT_SECONDS
    )
    limit = context.seconds_left(wanted)
    deadline = time.monotonic() + limit  # taken after seconds_left: never before the run's deadline when that binds
    request = {
        "method": settings_.get("method", "GET"),
        "url": url,
        "headers": settings_.get("headers", {}),
        "params": {key: str(value) for key, value in settings_.get("query", {}).items()},
    }
    if "json" in settings_:
        request["json"] = settings_["json"]
    elif "body" in settings_:
        request["content"] = settings_["body"].encode(errors="replace")  # a lone surrogate cannot be sent
    failed = f"{request['method']} {url[:200]} failed"
    try:
        allow_private = settings.HTTP_STEP_ALLOW_PRIVATE
        with (
            outbound.client(deadline=deadline, allow_private=allow_private, timeout=limit) as client,
            client.stream(**request) as response,
        ):
            content = read_limited(response)
    except outbound.AddressRefused as refused:
        raise StepFailed(str(refused)) from None
    except httpx.TimeoutException as error:
        if limit < wanted:
            raise StepFailed(context.past_deadline) from None
        raise StepFailed(f"{failed}: {error.__class__.__name__}: no complete response within {limit:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:  # ValueError: a header or JSON it cannot encode
        raise StepFailed(f"{failed}: {error.__class__.__name__}: {error}") from None
    output = {
        "status": response.status_code,
        "headers": dict(response.headers),
        "body": decoded_body(response, content),
    }
    if response.status_code >= 400 and settings_.get("fail_on_error_status", True):
        raise StepFailed(f"{request['method']} {url[:200]} answered {response.status_code}", output)
    return output
