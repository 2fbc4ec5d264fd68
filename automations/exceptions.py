"""Domain errors of automations. How a web service call answers each is hooks' business (hooks/exceptions.py)."""


class QuotaExceeded(Exception):
    """The account's monthly web service quota (WEB_SERVICE_MONTHLY_QUOTA) is used up."""


class NotOff(ValueError):
    """Reset needs the automation off: a run in progress must not see its state vanish."""
