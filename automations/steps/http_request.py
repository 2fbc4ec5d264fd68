"""HTTP request: call an outside URL; its status, headers and body are the step's output.

A status of 400 or more fails the step (and so the run, which may be
retried) unless `fail_on_error_status` is false. Addresses inside the
service's own network (loopback, private, link-local) are refused unless
HTTP_STEP_ALLOW_PRIVATE is on: anyone who can write an automation could
otherwise read internal services through it.
"""
import ipaddress
import json
import socket
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from automations.steps import StepFailed

KIND = "http_request"
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


def _check_destination(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StepFailed(f"not an http(s) URL: {url[:200]!r}")
    if settings.HTTP_STEP_ALLOW_PRIVATE:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise StepFailed(f"cannot resolve {parts.hostname}: {error}") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise StepFailed(f"{parts.hostname} is an internal address ({address}); requests there are not allowed")


def _body(response: httpx.Response):
    if len(response.content) > MAX_RESPONSE_BYTES:
        raise StepFailed(f"the response is larger than {MAX_RESPONSE_BYTES} bytes")
    if "json" in response.headers.get("content-type", ""):
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass
    return response.text


def run(settings_: dict, context) -> dict:
    url = settings_["url"]
    _check_destination(url)
    timeout = context.seconds_left(
        min(float(settings_.get("timeout_seconds", settings.HTTP_STEP_TIMEOUT_SECONDS)), settings.HTTP_STEP_TIMEOUT_SECONDS)
    )
    request = {"method": settings_.get("method", "GET"), "url": url, "headers": settings_.get("headers", {}),
               "params": {key: str(value) for key, value in settings_.get("query", {}).items()}}
    if "json" in settings_:
        request["json"] = settings_["json"]
    elif "body" in settings_:
        request["content"] = settings_["body"].encode()
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            response = client.request(**request)
    except httpx.HTTPError as error:
        raise StepFailed(f"{request['method']} {url[:200]} failed: {error.__class__.__name__}: {error}") from None
    output = {"status": response.status_code, "headers": dict(response.headers), "body": _body(response)}
    if response.status_code >= 400 and settings_.get("fail_on_error_status", True):
        raise StepFailed(f"{request['method']} {url[:200]} answered {response.status_code}", output)
    return output
