"""Domain errors of the webhook and web service URLs, each with the status and text that answer it (SPEC 7.3).

Body errors derive from Django's BadRequest so that one raised from a
request's input stream inside Django's own handling (a form, the admin,
OAuth) is a 400, as Django answers any bad request, rather than a 500.
"""

from django.core.exceptions import BadRequest


class BodyError(BadRequest):
    """The request body cannot be used; nothing is stored and nothing runs."""

    status_code = 400
    detail = "request body unusable"  # a web service's answer (docs/webhooks.md); webhooks answer with no body

    def __init__(self, *args):
        super().__init__(*(args or (self.detail,)))


class BodyTooLarge(BodyError):
    """The body is over HOOK_MAX_BODY_BYTES (413)."""

    status_code = 413
    detail = "request body too large"


class BodyIncomplete(BodyError):
    """The body ended before its declared length, or its chunked framing is broken: the client is gone or wrong."""

    status_code = 400
    detail = "request body incomplete"


class BodyTimedOut(BodyError):
    """The body did not arrive within REQUEST_BODY_TIMEOUT_SECONDS of the request's start (408)."""

    status_code = 408
    detail = "request body too slow"


class WebServiceError(Exception):
    """A web service call that starts no run (or whose run is gone): answered with detail as text/plain."""

    status_code = 500
    detail = "web service error"
    headers: tuple[tuple[str, str], ...] = ()


class WebServiceNotFound(WebServiceError):
    status_code = 404
    detail = "web service not found"


class WebServiceOverQuota(WebServiceError):
    """The owner's calls this month (UTC) are used up; Retry-After says when the next month's start."""

    status_code = 429
    detail = "monthly usage limit reached"

    def __init__(self, retry_after: int):
        super().__init__(self.detail)
        self.headers = (("Retry-After", str(retry_after)),)


class WebServiceInactive(WebServiceError):
    status_code = 503
    detail = "web service is not active"


class WebServiceInMaintenance(WebServiceError):
    status_code = 503
    detail = "web service is in maintenance"
