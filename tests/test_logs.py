"""No log line carries a URL key in clear (DESIGN.md contract 7): the filter, and every logger set up to use it."""

import io
import logging
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client
from gunicorn.config import Config

from automations import services as automation_services
from edge.logs import WITHHELD, GunicornLogger, RedactKeys
from hooks import services, webservice
from tests.e2e.stack import wait_until
from tests.processes import HooksProcess

KEY = "Zq3-x_9KpL0aBcDeFgHiJkLmNoPqRsTu"
TOKEN = "tK9mQ2xW7vB4nR8sL1pZ6yH3jF5dG0cA"  # the shape of django-oauth-toolkit's tokens
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def logged():
    """A logger of its own whose one handler has the filter; returns the logger and what it wrote."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactKeys())
    logger = logging.getLogger("tests.redacted")
    logger.addHandler(handler)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


@pytest.fixture
def console():
    """What Django's configured console handler (root, django, django.request) writes."""
    # Importing the hooks process's application runs django.setup(), which makes new handlers: done first, or the
    # test that imports it first in its test process would swap the stream of a handler about to be replaced.
    import config.asgi  # noqa: F401

    handler = next(handler for handler in logging.getLogger("django.request").handlers if handler.name == "console")
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


def test_the_message_is_redacted_whether_the_key_is_in_the_format_or_its_arguments(logged):
    logger, stream = logged
    logger.error("Internal Server Error: %s", f"/automation-{KEY}")
    logger.error(f"Not Found: /webservice-{KEY} (%d)", 404)
    logger.error("%s%s", "/webhook/automation-", KEY)  # split over two arguments: the formatted message counts
    logger.warning('"POST %(path)s HTTP/1.1"', {"path": f"/%61utomation-{KEY}"})
    lines = stream.getvalue().splitlines()
    assert lines == [
        "ERROR Internal Server Error: /automation-{key}",
        "ERROR Not Found: /webservice-{key} (404)",
        "ERROR /webhook/automation-{key}",
        'WARNING "POST /%61utomation-{key} HTTP/1.1"',
    ]


def test_oauth_credentials_in_a_query_string_are_redacted(logged):
    logger, stream = logged
    logger.warning('"GET %s HTTP/1.1"', f"/mcp?access_token={TOKEN}&x=1")
    logger.warning("%s", f"/oauth/token?grant_type=refresh_token&Refresh_Token={TOKEN}&client_secret={TOKEN}")
    logger.warning("%s", f"/oauth/token?code%3D{TOKEN}%26code_verifier%3D{TOKEN}&access%5Ftoken={TOKEN}")
    logger.warning("Referer %s", f"https://app.example/cb?state=s&amp;code={TOKEN}#top")
    logger.warning("%s", f"/automation-{KEY}?zipcode=1&error_code=2")
    assert stream.getvalue().splitlines() == [
        'WARNING "GET /mcp?access_token={redacted}&x=1 HTTP/1.1"',
        "WARNING /oauth/token?grant_type=refresh_token&Refresh_Token={redacted}&client_secret={redacted}",
        "WARNING /oauth/token?code%3D{redacted}%26code_verifier%3D{redacted}&access%5Ftoken={redacted}",
        "WARNING Referer https://app.example/cb?state=s&amp;code={redacted}#top",
        "WARNING /automation-{key}?zipcode=1&error_code=2",
    ]


def test_the_traceback_is_redacted_and_leaves_the_record_only_as_text(logged):
    logger, stream = logged
    try:
        raise ValueError(f"no automation at /webservice-{KEY}")
    except ValueError:
        logger.exception("failed")
    output = stream.getvalue()
    assert KEY not in output
    assert "ValueError: no automation at /webservice-{key}" in output
    assert "Traceback (most recent call last)" in output


def test_the_stack_is_redacted(logged):
    logger, stream = logged
    # The stack shows each frame's source line, with its comment:
    logger.warning("here", stack_info=True)  # /automation-Zq3-x_9KpL0aBcDeFgHiJkLmNoPqRsTu
    assert KEY not in stream.getvalue()
    assert "/automation-{key}" in stream.getvalue()


def test_arguments_that_do_not_fit_are_kept_redacted_and_nothing_raises(logged):
    logger, stream = logged
    logger.error("%d items at %s", "many", f"/automation-{KEY}")
    output = stream.getvalue()
    assert KEY not in output
    assert "/automation-{key}" in output and "%d items at %s" in output


def test_a_record_that_cannot_be_read_is_withheld_rather_than_written(logged):
    class Unprintable:
        def __str__(self):
            raise RuntimeError(f"/automation-{KEY}")

    logger, stream = logged
    logger.error(Unprintable())
    assert stream.getvalue() == f"ERROR {WITHHELD}\n"


def test_a_record_seen_by_two_handlers_is_redacted_for_both(logged):
    logger, first = logged
    second = io.StringIO()
    handler = logging.StreamHandler(second)
    handler.addFilter(RedactKeys())
    logger.addHandler(handler)
    try:
        logger.error("at %s", f"/form/s/{KEY}")
    finally:
        logger.removeHandler(handler)
    assert first.getvalue() == "ERROR at /form/s/{key}\n"
    assert second.getvalue() == "at /form/s/{key}\n"


def test_every_handler_of_the_logging_settings_redacts():
    assert settings.LOGGING["handlers"]
    for name, handler in settings.LOGGING["handlers"].items():
        assert "redact_keys" in handler.get("filters", []), name


@pytest.mark.django_db
def test_a_django_request_error_on_a_web_service_url_logs_no_key(make_automation, monkeypatch, console):
    automation = make_automation([{"id": "answer", "kind": "respond", "status": 200}])
    path = urlsplit(automation_services.web_service_url(automation)).path
    key = path.partition("webservice-")[2]

    def broken(automation, incoming, **_):
        raise RuntimeError(f"could not run {incoming.path}")

    monkeypatch.setattr(webservice, "call", broken)
    response = Client(raise_request_exception=False).post(path, data=b"{}", content_type="application/json")
    assert response.status_code == 500
    output = console.getvalue()
    assert key not in output
    assert "Internal Server Error: /webservice-{key}" in output
    assert "RuntimeError: could not run /webservice-{key}" in output


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up in threads of its own
def test_the_hooks_processs_error_line_logs_no_key(make_automation, monkeypatch, console):
    automation = make_automation([])
    path = urlsplit(automation_services.hook_url(automation)).path
    key = path.partition("automation-")[2]

    def broken(*, automation_id, incoming):
        raise RuntimeError(f"could not store {incoming.path}")

    monkeypatch.setattr(services, "new_delivery", broken)
    client = Client()
    client.handler = HooksProcess()
    assert client.post("/webhook" + path, data=b"{}", content_type="application/json").status_code == 500
    output = console.getvalue()
    assert key not in output
    assert "Internal Server Error: /webhook/automation-{key}" in output
    assert "RuntimeError: could not store /webhook/automation-{key}" in output


@pytest.fixture
def gunicorn_logger():
    """gunicorn's logger as edge/gunicorn.py names it, with an access log; returns it and what each log wrote."""
    import edge.gunicorn

    cfg = Config()
    cfg.set("logger_class", edge.gunicorn.logger_class)
    cfg.set("accesslog", "-")
    logger = cfg.logger_class(cfg)
    streams = {}
    for name, log in (("error", logger.error_log), ("access", logger.access_log)):
        streams[name] = io.StringIO()
        for handler in log.handlers:
            handler.setStream(streams[name])
    yield logger, streams
    for log in (logger.error_log, logger.access_log):
        for handler in list(log.handlers):
            log.removeHandler(handler)


def test_gunicorn_runs_the_redacting_logger(gunicorn_logger):
    logger, _ = gunicorn_logger
    assert isinstance(logger, GunicornLogger)


def test_gunicorns_access_log_holds_no_key(gunicorn_logger):
    logger, streams = gunicorn_logger
    raw = f"/webhook%2F%61utomation-{KEY}"
    request = SimpleNamespace(uri=raw + "?a=1", headers=[])
    response = SimpleNamespace(status="200 OK", response_length=0, sent=0, headers=[])
    environ = {
        "REQUEST_METHOD": "POST",
        "RAW_URI": raw + "?a=1",
        "PATH_INFO": f"/webhook/automation-{KEY}",
        "QUERY_STRING": "a=1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": f"https://example.com/form/{KEY}",
    }
    logger.cfg.set("access_log_format", '%(h)s "%(r)s" %(s)s "%(f)s" %(U)s')
    logger.access(response, request, environ, timedelta(milliseconds=3))
    assert streams["access"].getvalue() == (
        '127.0.0.1 "POST /webhook%2F%61utomation-{key}?a=1 HTTP/1.1" 200 "https://example.com/form/{key}" '
        "/webhook/automation-{key}\n"
    )


def test_gunicorns_access_log_holds_no_oauth_credential(gunicorn_logger):
    logger, streams = gunicorn_logger
    query = f"access_token={TOKEN}&code={TOKEN}&code_verifier={TOKEN}"
    request = SimpleNamespace(uri=f"/mcp?{query}", headers=[])
    response = SimpleNamespace(status="400 Bad Request", response_length=0, sent=0, headers=[])
    environ = {
        "REQUEST_METHOD": "POST",
        "RAW_URI": f"/mcp?{query}",
        "PATH_INFO": "/mcp",
        "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": f"http://127.0.0.1:33418/callback?code={TOKEN}&state=s",
    }
    logger.cfg.set("access_log_format", '%(h)s "%(r)s" %(s)s "%(f)s" %(q)s')
    logger.access(response, request, environ, timedelta(milliseconds=3))
    redacted = "access_token={redacted}&code={redacted}&code_verifier={redacted}"
    assert streams["access"].getvalue() == (
        f'127.0.0.1 "POST /mcp?{redacted} HTTP/1.1" 400 "http://127.0.0.1:33418/callback?code={{redacted}}&state=s" '
        f"{redacted}\n"
    )


def test_uvicorns_access_log_in_the_hooks_process_holds_no_oauth_credential_or_key(tmp_path):
    """A real hooks server (gunicorn, uvicorn's worker) writing its access log through the redacting logger."""
    from tests.test_asgi_worker import QUICK_APP, exchange, serving

    log = tmp_path / "access.log"
    query = f"access_token={TOKEN}&refresh_token={TOKEN}&code={TOKEN}&client_secret={TOKEN}&code_verifier={TOKEN}"
    options = ("--logger-class", "edge.logs.GunicornLogger", "--access-logfile", str(log))
    with serving(tmp_path, QUICK_APP, *options) as (port, _):
        for target in (f"/mcp?{query}", f"/automation-{KEY}?code={TOKEN}"):
            exchange(port, f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        wait_until(lambda: log.read_text().count("HTTP/1.1") == 2, 30, 0.1, "both access lines")
    written = log.read_text()
    assert TOKEN not in written and KEY not in written
    assert '"GET /mcp?access_token={redacted}&refresh_token={redacted}&code={redacted}' in written
    assert '"GET /automation-{key}?code={redacted} HTTP/1.1" 404' in written


def test_gunicorns_error_log_holds_no_key_after_a_reload_too(gunicorn_logger):
    logger, streams = gunicorn_logger
    logger.setup(logger.cfg)  # a HUP runs setup again, with new handlers
    for handler in logger.error_log.handlers:
        handler.setStream(streams["error"])
    line = f"POST /automation-{KEY}\x7f HTTP/1.1"
    logger.warning(f"Invalid request from ip=127.0.0.1: Invalid HTTP request line: {line!r}")
    assert "Invalid HTTP request line: 'POST /automation-{key}\\x7f HTTP/1.1'" in streams["error"].getvalue()
    assert KEY not in streams["error"].getvalue()


CELERY_LOGGING = f"""
import logging, django
django.setup()
from config.celery import app
from celery.utils.log import get_task_logger
app.log.setup(loglevel="INFO", redirect_stdouts=True)
logging.getLogger("celery.worker").error("received /automation-{KEY}")
get_task_logger("hooks.tasks").error("task at /webservice-{KEY}")
logging.getLogger("django.request").error("Internal Server Error: /webservice-{KEY}")
print("printed /moderation?queue={KEY}")
"""


def test_celerys_own_handlers_redact_keys():
    """A worker or beat replaces the root logger's handlers; Celery's signals give the new ones the filter."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings"}
    result = subprocess.run(
        [sys.executable, "-c", CELERY_LOGGING], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert KEY not in output
    for line in (
        "received /automation-{key}",
        "task at /webservice-{key}",
        "Internal Server Error: /webservice-{key}",
        "printed /moderation?queue={key}",
    ):
        assert line in output, output
