"""Error reports (DEBUG pages, error mails) with the passwords inside URLs masked.

Django hides settings whose names look secret (SECRET_KEY, PASSWORD), but
DATABASE_URL, REDIS_URL, CELERY_BROKER_URL and a cache's LOCATION carry their
password inside the value, and runserver copies the environment into
request.META. Every string of the settings, the request's META and the frame
variables has the password of any scheme://user:password@host masked, and
every URL key replaced by {key} (publickeys/redaction.py).
"""

import re

from django.views.debug import SafeExceptionReporterFilter

from publickeys.redaction import redact

# Up to the last "@" before the path, as urlsplit reads the userinfo: a raw "@" in a password is masked whole.
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^/?#\s]*@", re.IGNORECASE)


class ExceptionReporterFilter(SafeExceptionReporterFilter):
    """Django's filter, and passwords of URLs masked wherever a string is shown."""

    def cleanse_setting(self, key, value):
        cleansed = super().cleanse_setting(key, value)  # calls this method again for the items of a dict or list
        return self.mask(cleansed) if isinstance(cleansed, str) else cleansed

    def get_traceback_frame_variables(self, request, tb_frame):
        return [(name, self.mask(value)) for name, value in super().get_traceback_frame_variables(request, tb_frame)]

    def mask(self, value):
        """The value with URL passwords and keys masked in it, and in the strings of its lists, tuples and dicts."""
        if isinstance(value, str):
            return redact(_URL_PASSWORD.sub(rf"\g<head>{self.cleansed_substitute}@", value))
        if type(value) is dict:  # not a QueryDict: shown as Django shows it
            return {key: self.mask(item) for key, item in value.items()}
        if type(value) in (list, tuple):
            return type(value)(self.mask(item) for item in value)
        return value
