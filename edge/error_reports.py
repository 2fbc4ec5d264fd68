"""Error reports (DEBUG pages, error mails) with the passwords inside URLs, URL keys and OAuth credentials masked.

Django hides settings whose names look secret (SECRET_KEY, PASSWORD), but
DATABASE_URL, REDIS_URL, CELERY_BROKER_URL and a cache's LOCATION carry their
password inside the value, and runserver copies the environment into
request.META. Every string of the settings, the request's META and the frame
variables has the password of any scheme://user:password@host masked, and
every URL key and OAuth credential in a query string redacted
(edge/redaction.py). The report's query parameters, which Django shows
unfiltered, are masked by name, and its rendered text is redacted whole
(ExceptionReporter, DEFAULT_EXCEPTION_REPORTER).
"""

import re
from urllib.parse import unquote_plus

from django.utils.datastructures import MultiValueDict
from django.views import debug

from edge.redaction import CREDENTIALS, PLACEHOLDER, redact

# Query parameters shown masked whatever their value: OAuth credentials, and the two that carry a URL key
# (/webchat/embed.js?key=, /moderation?queue=), whose value alone has no shape to be found by.
MASKED_PARAMETERS = {*CREDENTIALS, "key", "queue"}

# Up to the last "@" before the path, as urlsplit reads the userinfo: a raw "@" in a password is masked whole.
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^/?#\s]*@", re.IGNORECASE)


class ExceptionReporterFilter(debug.SafeExceptionReporterFilter):
    """Django's filter, and passwords of URLs masked wherever a string is shown."""

    def cleanse_setting(self, key, value):
        if key == "QUERY_STRING" and isinstance(value, str):
            value = _masked_query(value)
        cleansed = super().cleanse_setting(key, value)  # calls this method again for the items of a dict or list
        return self.mask(cleansed) if isinstance(cleansed, str) else cleansed

    def get_traceback_frame_variables(self, request, tb_frame):
        return [(name, self.mask(value)) for name, value in super().get_traceback_frame_variables(request, tb_frame)]

    def mask(self, value):
        """The value with URL passwords and keys masked in it, and in the strings of its lists, tuples and dicts; the
        items of dicts and query dicts named as MASKED_PARAMETERS masked whole."""
        if isinstance(value, str):
            return redact(_URL_PASSWORD.sub(rf"\g<head>{self.cleansed_substitute}@", value))
        if type(value) is dict:  # not a QueryDict: shown as Django shows it
            return {key: PLACEHOLDER if _masked_name(key) else self.mask(item) for key, item in value.items()}
        if type(value) in (list, tuple):
            return type(value)(self.mask(item) for item in value)
        if isinstance(value, MultiValueDict):  # request.GET, request.POST
            masked = MultiValueDict()
            for name, items in value.lists():
                masked.setlist(name, [PLACEHOLDER if _masked_name(name) else self.mask(item) for item in items])
            return masked
        return value


def _masked_name(name) -> bool:
    return isinstance(name, str) and name.lower() in MASKED_PARAMETERS


def _masked_query(query: str) -> str:
    """A query string with the value of each of MASKED_PARAMETERS replaced."""
    parts = []
    for part in query.split("&"):
        name, equals, _ = part.partition("=")
        parts.append(f"{name}={PLACEHOLDER}" if equals and _masked_name(unquote_plus(name)) else part)
    return "&".join(parts)


class ExceptionReporter(debug.ExceptionReporter):
    """Django's report, its query parameters masked by name and the whole text redacted as a log line is.

    The page also shows the request's path and URL straight from the
    request (its title, "Request URL", the paste form), which no filter
    sees: the rendered text is redacted whole.
    """

    def get_traceback_data(self):
        data = super().get_traceback_data()
        if "request_GET_items" in data:
            data["request_GET_items"] = [
                (name, PLACEHOLDER if _masked_name(name) else value) for name, value in data["request_GET_items"]
            ]
        return data

    def get_traceback_html(self) -> str:
        return redact(super().get_traceback_html())

    def get_traceback_text(self) -> str:
        return redact(super().get_traceback_text())
