"""Error pages and reports mask the passwords inside URL-valued settings, the environment and frame variables."""

import sys

import pytest
from django.test import RequestFactory
from django.views.debug import get_default_exception_reporter_filter, technical_500_response

from edge.error_reports import ExceptionReporterFilter

SECRETS = ("pg-pass-1", "redis-pass-2", "broker-pass-3", "cache-pass-4", "env-pass-5", "local-pass-6", "p@ss-7")
# Far from the lines the error page quotes as source context.
ENVIRONMENT_URL = "postgres://flowgate:env-pass-5@db.internal/flowgate"
LOCAL_URL = "postgresql://flowgate:local-pass-6@db.internal/flowgate"
RAW_AT_URL = "postgres://flowgate:p@ss-7@db.internal/flowgate"
TOKEN = "tK9mQ2xW7vB4nR8sL1pZ6yH3jF5dG0cA"
KEY = "Zq3-x_9KpL0aBcDeFgHiJkLmNoPqRsTu"


@pytest.fixture
def url_settings(settings):
    settings.DATABASE_URL = "postgres://flowgate:pg-pass-1@db.internal:5432/flowgate"
    settings.REDIS_URL = "redis://:redis-pass-2@cache.internal:6379/0"
    settings.CELERY_BROKER_URL = "rediss://default:broker-pass-3@broker.internal:6380/0"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "shared": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": ["redis://u:cache-pass-4@a.internal:6379/1", "redis://b.internal:6379/1"],
        },
    }
    return settings


def test_the_default_filter_is_the_one_that_masks_url_passwords():
    assert isinstance(get_default_exception_reporter_filter(), ExceptionReporterFilter)


def test_safe_settings_hold_no_url_password(url_settings):
    safe = get_default_exception_reporter_filter().get_safe_settings()
    shown = repr(safe)
    assert not [secret for secret in SECRETS if secret in shown]
    assert safe["DATABASE_URL"] == "postgres://flowgate:********************@db.internal:5432/flowgate"
    assert safe["REDIS_URL"] == "redis://:********************@cache.internal:6379/0"
    assert safe["CACHES"]["shared"]["LOCATION"][1] == "redis://b.internal:6379/1"


def connect(connection_url: str, others: dict) -> None:
    raise RuntimeError("the database is down")


def test_the_debug_error_page_shows_no_url_password(url_settings):
    url_settings.DEBUG = True
    # runserver copies the environment into META, so the page lists it.
    request = RequestFactory().get("/", DATABASE_URL=ENVIRONMENT_URL)
    try:
        connect(LOCAL_URL, {"urls": [RAW_AT_URL]})
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "the database is down" in page and "connection_url" in page and "DATABASE_URL" in page
    assert not [secret for secret in SECRETS if secret in page]
    assert RAW_AT_URL.split("@", 1)[1] not in page  # all of a password with a raw "@"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("postgres://user@db/x", "postgres://user@db/x"),
        ("postgres://db:5432/x", "postgres://db:5432/x"),
        ("http://host:80/?next=a@b", "http://host:80/?next=a@b"),
        ("redis://:pw@h:1/0,redis://:pw2@h2:1/0", "redis://:***@h:1/0,redis://:***@h2:1/0"),
        ("see amqp://guest:guest@localhost//", "see amqp://guest:***@localhost//"),
    ],
)
def test_it_masks_only_the_password_of_each_url(value, expected):
    masking = ExceptionReporterFilter()
    masking.cleansed_substitute = "***"
    assert masking.mask(value) == expected


def test_error_reports_show_no_url_key():
    from edge.error_reports import ExceptionReporterFilter

    masked = ExceptionReporterFilter().mask({"PATH_INFO": "/webhook/automation-Zq3kX9pLm2vR7tYw", "n": 1})
    assert masked == {"PATH_INFO": "/webhook/automation-{key}", "n": 1}


def serve(request, query) -> None:
    raise RuntimeError("the view failed")


def test_the_debug_error_page_shows_no_oauth_credential_or_key_in_the_url(settings):
    settings.DEBUG = True
    pages = []
    for path, query in (
        (f"/webservice-{KEY}", {"access_token": TOKEN, "code": TOKEN, "page": "2"}),
        ("/moderation", {"queue": KEY, "client_secret": TOKEN, "page": "2"}),
    ):
        request = RequestFactory().get(path, query)
        try:
            serve(request, request.GET)  # frames holding the request and its parameters, as a view's do
        except RuntimeError:
            pages.append(technical_500_response(request, *sys.exc_info()).content.decode())
    for page in pages:
        assert "the view failed" in page
        assert TOKEN not in page and KEY not in page
        assert "page=2" in page
    assert "/webservice-{key}?access_token={redacted}&amp;code={redacted}" in pages[0]  # the request URL
    assert "queue={redacted}&amp;client_secret={redacted}" in pages[1]  # QUERY_STRING


def test_an_error_mail_shows_no_oauth_credential_or_key_in_the_url():
    from django.views.debug import ExceptionReporter

    from edge.error_reports import ExceptionReporter as Masking

    request = RequestFactory().get(f"/webservice-{KEY}", {"refresh_token": TOKEN})
    try:
        serve(request, request.GET)
    except RuntimeError:
        reporter = Masking(request, *sys.exc_info(), is_email=True)
        assert isinstance(reporter, ExceptionReporter)
        text, html = reporter.get_traceback_text(), reporter.get_traceback_html()
    assert TOKEN not in text + html and KEY not in text + html
    assert "refresh_token={redacted}" in text
