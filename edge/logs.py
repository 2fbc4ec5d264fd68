"""Log lines without URL keys (DESIGN.md contract 7) or OAuth credentials: a filter for every handler, and gunicorn's
logger with it.

A URL key is a password, and request paths reach log lines from many
places: gunicorn's access log (the raw request line, percent-encoded as
sent), its error log (a request line it could not parse), django.request
("Internal Server Error: /webservice-{key}" and its traceback), Celery's
task failures (their arguments and exceptions). A token, code or secret a
client put in a query string reaches the same lines, and is redacted with
the keys (edge/redaction.py). uvicorn's access lines in the hooks process go
to gunicorn's access handlers (edge/asgi_worker.py). The filter sits on the
handlers, not the loggers, because a logger's filters never see the
records its children propagate; Django's LOGGING, edge/gunicorn.py's
logger_class and config/celery.py's logging signals put it on every handler
the service writes through.
"""

import logging

from gunicorn import glogging

from edge.redaction import redact

WITHHELD = "a log record was withheld: it could not be redacted"
_TRACEBACKS = logging.Formatter()


class RedactKeys(logging.Filter):
    """Rewrites a record so that its message, traceback and stack hold no key in clear; never drops or raises.

    The message is formatted here (msg % args) and redacted whole, since a
    key may sit in either part; args are then emptied. The traceback is
    formatted here too and exc_info cleared, so that no formatter or handler
    after this one renders the original exception again. A record that
    cannot be rewritten is replaced by WITHHELD rather than let through.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            _redact_record(record)
        except Exception:
            record.msg, record.args = WITHHELD, ()
            record.exc_info = record.exc_text = record.stack_info = None
        return True


def _redact_record(record: logging.LogRecord) -> None:
    record.msg, record.args = redact(_message(record)), ()
    if record.exc_info:
        record.exc_text = record.exc_text or _TRACEBACKS.formatException(record.exc_info)
        record.exc_info = None
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def _message(record: logging.LogRecord) -> str:
    """The record's message; one whose arguments do not fit it keeps both, as logging's own error report would."""
    try:
        return record.getMessage()
    except Exception:
        return f"{record.msg!s} (arguments that did not fit the message: {record.args!r})"


def redact_handlers(logger: logging.Logger) -> None:
    """Put the filter on each of the logger's handlers (once)."""
    for handler in logger.handlers:
        if not any(isinstance(existing, RedactKeys) for existing in handler.filters):
            handler.addFilter(RedactKeys())


class GunicornLogger(glogging.Logger):
    """gunicorn's logger with its error and access handlers redacting keys; setup runs again on a reload."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            redact_handlers(logger)
