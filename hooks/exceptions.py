"""Domain errors of the web service URLs, each with the status and text that answer it (SPEC 7.3).

Errors of request bodies, every URL's, are edge.bodies.BodyError and its kinds.
"""


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
