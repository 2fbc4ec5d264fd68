"""Web service URLs (SPEC 4.2, 7.3): the caller waits for the run and gets what its respond step sets."""

import io
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import urlsplit

import pytest

from automations import services as automation_services
from automations.models import Run, WebServiceUsage
from hooks import webservice

pytestmark = pytest.mark.django_db

ECHO = [
    {"id": "greet", "kind": "set_values", "values": {"text": "hello {{trigger.params.name}}"}},
    {
        "id": "answer",
        "kind": "respond",
        "status": 201,
        "headers": {"X-Kind": "greeting"},
        "body": {"greeting": "{{steps.greet.text}}", "got": "{{trigger.body}}"},
    },
]


@pytest.fixture
def client(web_client):
    """Requests as the web process serves them (edge/handler.py); the hooks process hands these to the same."""
    return web_client


def service_path(automation):
    return urlsplit(automation_services.web_service_url(automation)).path


def test_it_answers_with_the_status_headers_and_body_the_respond_step_sets(client, make_automation):
    automation = make_automation(ECHO)
    response = client.post(
        service_path(automation) + "?name=ada", data=b'{"a": [1, 2]}', content_type="application/json"
    )
    assert response.status_code == 201
    assert response["X-Kind"] == "greeting"
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"greeting": "hello ada", "got": {"a": [1, 2]}}
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Expose-Headers"] == "X-Kind"  # a browser script may read it
    assert "Access-Control-Allow-Credentials" not in response
    run = Run.objects.get()
    assert (run.source, run.status) == ("web_service", "succeeded")


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_any_method_runs_it(client, make_automation, method):
    automation = make_automation(ECHO)
    assert client.generic(method, service_path(automation) + "?name=x").status_code == 201


def test_a_text_body_is_sent_as_text(client, make_automation):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "plain {{trigger.params.q}}"}])
    response = client.get(service_path(automation) + "?q=1")
    assert (response.status_code, response.content) == (200, b"plain 1")
    assert response["Content-Type"].startswith("text/plain")


def test_the_respond_step_cannot_grant_credentials_or_change_cors(client, make_automation):
    automation = make_automation(
        [
            {
                "id": "r",
                "kind": "respond",
                "headers": {
                    "Access-Control-Allow-Origin": "https://evil.example",
                    "Access-Control-Allow-Credentials": "true",
                    "Content-Type": "text/csv",
                },
            }
        ]
    )
    response = client.get(service_path(automation))
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response
    assert response["Content-Type"] == "text/csv"


def test_an_html_answer_never_runs_as_the_services_origin_nor_sets_its_cookies_or_policy(client, make_automation):
    """Anyone with an account writes the answer, and it is served from the service's own host."""
    automation = make_automation(
        [
            {
                "id": "r",
                "kind": "respond",
                "headers": {
                    "Content-Type": "text/html",
                    "Set-Cookie": "sessionid=planted; Path=/",
                    "Content-Security-Policy": "script-src *",
                    "X-Frame-Options": "ALLOWALL",
                    "X-Content-Type-Options": "sniff",
                    "Refresh": "0; url=https://evil.example",
                },
                "body": "<script>fetch('/account/')</script>",
            }
        ]
    )
    response = client.get(service_path(automation))
    assert response["Content-Type"] == "text/html" and b"<script>" in response.content  # the step's bytes, as sent
    assert response["Content-Security-Policy"] == "sandbox"  # shown in an opaque origin, its script never run
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Set-Cookie" not in response and not response.cookies
    assert "Refresh" not in response and response.get("X-Frame-Options") != "ALLOWALL"


def test_without_a_respond_step_it_answers_when_the_run_ends(client, make_automation):
    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    response = client.post(service_path(automation))
    run = Run.objects.get()
    assert response.status_code == 200
    assert response.json() == {"status": "succeeded", "run_id": run.pk}


def test_a_stopped_run_answers_200_and_a_failed_one_500(client, make_automation):
    stopped = make_automation(
        [{"id": "c", "kind": "condition", "all": [{"left": "{{trigger.params.go}}", "op": "exists"}]}]
    )
    assert client.get(service_path(stopped)).json()["status"] == "stopped"
    failing = make_automation([{"id": "h", "kind": "http_request", "url": "nope"}], name="failing")
    response = client.get(service_path(failing))
    assert response.status_code == 500
    assert response.json()["error"] == "the automation failed"


def test_a_run_past_the_wait_timeout_answers_504(client, make_automation, settings):
    settings.WEB_SERVICE_TIMEOUT_SECONDS = 0  # the caller's time is up before the first step
    automation = make_automation(
        [{"id": "a", "kind": "set_values", "values": {"a": 1}}, {"id": "r", "kind": "respond", "body": "late"}]
    )
    response = client.get(service_path(automation))
    assert response.status_code == 504
    assert Run.objects.get().status == Run.Status.FAILED


def test_options_is_a_preflight_that_neither_runs_nor_counts(client, make_automation):
    automation = make_automation(ECHO)
    response = client.options(
        service_path(automation),
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
    )
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Allow-Headers"] == "content-type"
    assert not Run.objects.exists()
    assert not WebServiceUsage.objects.exists()


def test_unknown_keys_get_404_web_service_not_found(client, make_automation):
    automation = make_automation(ECHO)
    path = service_path(automation)
    for miss in (
        path[:-1],
        path + "x",
        "/webservice-",
        "/webservice-" + "A" * 32,
        path.replace("/webservice-", "/automation-") + "zz",
    ):
        response = client.post(miss)
        if miss.startswith("/webservice-"):
            assert (response.status_code, response.content) == (404, b"web service not found"), miss
    assert not Run.objects.exists()


def test_the_webhook_key_does_not_open_the_web_service(client, make_automation):
    automation = make_automation(ECHO)
    hook_key = automation_services.hook_url(automation).rsplit("automation-", 1)[1]
    assert client.get("/webservice-" + hook_key).status_code == 404


def test_an_automation_that_is_off_answers_503(client, make_automation):
    automation = make_automation(ECHO, enabled=False)
    response = client.get(service_path(automation))
    assert (response.status_code, response.content) == (503, b"web service is not active")


def test_the_monthly_quota_per_account_answers_429_once_used(client, make_automation, settings):
    settings.WEB_SERVICE_MONTHLY_QUOTA = 2
    first, second = make_automation(ECHO), make_automation(ECHO, name="second")
    assert client.get(service_path(first)).status_code == 201
    assert client.get(service_path(second)).status_code == 201
    response = client.get(service_path(first))
    assert (response.status_code, response.content) == (429, b"monthly usage limit reached")
    assert 0 < int(response["Retry-After"]) <= 31 * 86400  # the first of next month
    assert response["Access-Control-Expose-Headers"] == "Retry-After"
    assert Run.objects.count() == 2
    assert WebServiceUsage.objects.get().calls == 2


@pytest.mark.parametrize(
    "now, seconds",
    [
        (datetime(2026, 12, 31, 23, 59, 30, tzinfo=UTC), 30),
        (datetime(2026, 2, 1, tzinfo=UTC), 28 * 86400),
        (datetime(2026, 11, 30, 18, 0, 0, 500_000, tzinfo=timezone(timedelta(hours=-5))), 3600),  # 23:00:00.5 UTC
    ],
)
def test_the_quotas_retry_after_is_the_start_of_the_next_month_in_utc(now, seconds):
    assert webservice.seconds_to_next_month(now) == seconds


def test_a_miss_is_answered_before_any_of_its_body_is_read(client):
    class Untouched(io.BytesIO):
        def read(self, *args):
            raise AssertionError("the body of a miss was read")

        readline = read

    for path in ("/webservice-" + "A" * 32, "/webservice-%E2%82%AC", "/webservice-%FF", "/webservice-%ED%A0%80"):
        response = client.post(path, CONTENT_LENGTH="20000000", **{"wsgi.input": Untouched()})
        assert (response.status_code, response.content) == (404, b"web service not found"), path
    assert not WebServiceUsage.objects.exists()


def test_maintenance_answers_503(client, make_automation, settings):
    settings.MAINTENANCE_MODE = True
    assert client.get(service_path(make_automation(ECHO))).status_code == 503


def test_a_cut_off_body_neither_runs_nor_counts(client, make_automation):
    from hooks.tests.test_receive import Leaving

    automation = make_automation(ECHO)
    response = client.post(
        service_path(automation),
        content_type="application/json",
        CONTENT_LENGTH="1000",
        **{"wsgi.input": Leaving(b'{"a": [1, 2], "padding": "xxxxxxxxxx')},
    )
    assert (response.status_code, response.content) == (400, b"request body incomplete")
    assert response["Access-Control-Allow-Origin"] == "*"
    assert not Run.objects.exists()
    assert not WebServiceUsage.objects.exists()
