"""Domain errors of automations, each with the status and text SPEC 7.3 gives it."""


class WebServiceError(Exception):
    status_code = 500
    message = "web service error"


class WebServiceNotFound(WebServiceError):
    status_code = 404
    message = "web service not found"


class QuotaExceeded(WebServiceError):
    status_code = 429
    message = "monthly usage limit reached"


class WebServiceInactive(WebServiceError):
    status_code = 503
    message = "web service is not active"


class NotOff(ValueError):
    """Reset needs the automation off: a run in progress must not see its state vanish."""
