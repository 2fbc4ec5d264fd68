"""Deliveries and runs keep the request path with its key as {key} (contract 3: a dump yields no working URL)."""

import importlib
import json
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.apps import apps
from django.utils import timezone

from automations import services as automation_services
from automations.models import Automation, LookupRow, Run
from hooks import deliveries, selectors
from hooks.models import Delivery
from tests.local_apps import QuietHandler, serving

pytestmark = pytest.mark.django_db(transaction=True)  # stored and looked up as in production, by other threads

ECHO_PATH = [{"id": "answer", "kind": "respond", "body": {"path": "{{trigger.path}}"}}]
redact_key_paths = importlib.import_module("hooks.migrations.0003_redact_key_paths")


@pytest.fixture
def client(hooks_client):
    return hooks_client


@pytest.mark.parametrize("prefix", ["/", "/webhook/", "/%61utomation%2D"])
def test_a_delivery_and_its_run_keep_the_path_without_the_key(client, make_automation, prefix):
    automation = make_automation([{"id": "keep", "kind": "set_values", "values": {"path": "{{trigger.path}}"}}])
    path = urlsplit(automation_services.hook_url(automation)).path
    key = path.partition("automation-")[2]
    sent = path if prefix == "/" else path.replace("/automation-", prefix if "%" in prefix else prefix + "automation-")
    assert client.post(sent, data=b"{}", content_type="application/json").status_code == 200
    delivery = Delivery.objects.get()
    expected = "/webhook/automation-{key}" if prefix == "/webhook/" else "/automation-{key}"
    assert delivery.path == expected
    deliveries.process_delivery(delivery_id=delivery.pk)
    run = Run.objects.get()
    assert run.trigger["path"] == expected
    assert run.steps[0]["output"] == {"path": expected}
    assert key not in repr(list(Delivery.objects.values())) + repr(list(Run.objects.values()))


def test_a_web_service_answers_the_path_as_requested_and_its_run_keeps_it_without_the_key(client, make_automation):
    automation = make_automation(ECHO_PATH)
    path = urlsplit(automation_services.web_service_url(automation)).path
    response = client.post(path, data=b"{}", content_type="application/json")
    assert response.json() == {"path": path}  # SPEC 2.3: the request path, to the caller who sent it
    run = Run.objects.get()
    assert run.trigger["path"] == "/webservice-{key}"
    assert run.steps[0]["output"]["body"] == {"path": "/webservice-{key}"}
    assert path.partition("webservice-")[2] not in repr(list(Run.objects.values()))


class Echo(QuietHandler):
    """An outside app that answers what it was sent: the path it was called at and the JSON body."""

    def do_POST(self):
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"called_at": self.path, "sent": sent}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def sends_the_path(app: str) -> list[dict]:
    return [
        {"id": "kept", "kind": "set_values", "values": {"path": "{{trigger.path}}"}},
        {
            "id": "call",
            "kind": "http_request",
            "method": "POST",
            "url": app + "{{trigger.path}}",
            "json": "{{trigger}}",
        },
    ]


@pytest.fixture
def echo_app(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    with serving(Echo) as url:
        yield url


def test_a_webhook_step_sends_the_path_as_requested_and_its_run_keeps_it_without_the_key(
    client, make_automation, echo_app
):
    automation = make_automation(sends_the_path(echo_app))
    path = urlsplit(automation_services.hook_url(automation)).path
    key = path.partition("automation-")[2]
    assert client.post("/webhook" + path, data=b'{"n": 1}', content_type="application/json").status_code == 200
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)
    run = Run.objects.get()
    assert run.status == Run.Status.SUCCEEDED, run.steps
    kept, call = (step["output"] for step in run.steps)
    assert kept == {"path": "/webhook/automation-{key}"}  # a step that stores what it renders gets the stored path
    # The app was called at the path as requested and sent it; what it answered is stored with the key redacted.
    assert call["body"] == {
        "called_at": "/webhook/automation-{key}",
        "sent": {**run.trigger, "path": "/webhook/automation-{key}"},
    }
    assert run.trigger["path"] == "/webhook/automation-{key}"
    assert key not in repr(list(Delivery.objects.values())) + repr(list(Run.objects.values()))


def test_a_step_that_fails_stores_its_error_without_the_key_and_its_retry_sends_the_path_too(
    client, make_automation, echo_app
):
    steps = [{"id": "call", "kind": "http_request", "method": "POST", "url": "http://[::1]:1{{trigger.path}}"}]
    automation = make_automation(steps, settings={"retries": {"max_attempts": 2}})
    path = urlsplit(automation_services.hook_url(automation)).path
    assert client.post(path, data=b"{}", content_type="application/json").status_code == 200
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)
    first, retry = Run.objects.order_by("pk")
    assert first.status == Run.Status.FAILED
    assert first.error.startswith("step call: POST http://[::1]:1/automation-{key} failed: ConnectError")
    assert retry.retry_of_id == first.pk and retry.trigger_key_id == first.trigger_key_id is not None
    assert path.partition("automation-")[2] not in repr(list(Run.objects.values()))


def test_a_delivery_kept_past_new_urls_runs_with_the_path_as_stored(client, make_automation, echo_app):
    """The key it came with was retired, and its sealed copy emptied: nothing can rebuild it."""
    automation = make_automation(sends_the_path(echo_app), enabled=False)
    path = urlsplit(automation_services.hook_url(automation)).path
    assert client.post(path, data=b"{}", content_type="application/json").status_code == 200
    Delivery.objects.update(received_at=timezone.now() - timedelta(minutes=1))
    automation_services.issue_new_urls(automation=automation)
    Automation.objects.filter(pk=automation.pk).update(enabled=True)
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)
    run = Run.objects.get()
    assert run.steps[1]["output"]["body"]["sent"]["path"] == "/automation-{key}"


def test_a_delivery_received_while_an_old_key_may_still_be_remembered_keeps_the_stored_path(
    client, make_automation, echo_app
):
    """A process accepts a replaced key for HOOK_KEY_MEMORY_SECONDS: which of the two it carried is not known."""
    automation = make_automation(sends_the_path(echo_app))
    automation_services.issue_new_urls(automation=automation)
    path = urlsplit(automation_services.hook_url(automation)).path
    assert client.post(path, data=b"{}", content_type="application/json").status_code == 200
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)
    run = Run.objects.get()
    assert run.trigger_key_id is None
    assert run.steps[1]["output"]["body"]["called_at"] == "/automation-%7Bkey%7D"
    Delivery.objects.all().delete()
    Run.objects.all().delete()
    later = timezone.now() + timedelta(seconds=selectors.HOOK_KEY_MEMORY_SECONDS + 1)
    assert client.post(path, data=b"{}", content_type="application/json").status_code == 200
    Delivery.objects.update(received_at=later)  # as if it came once the old key was forgotten everywhere
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)
    assert Run.objects.get().steps[1]["output"]["body"]["called_at"] == "/automation-{key}"


def test_the_migration_redacts_paths_stored_before(make_automation):
    automation = make_automation([])
    key = "Zq3-x_9KpL0aBcDeFgHiJkLmNoPqRsTu"

    def delivery(path):
        return Delivery.objects.create(automation=automation, method="POST", path=path, body=b"", body_digest="0" * 64)

    def run(trigger, source="webhook"):
        return Run.objects.create(automation=automation, source=source, trigger=trigger)

    stored = delivery(f"/webhook/automation-{key}")
    unrelated = delivery(path="/elsewhere")
    many_short_keys = delivery(path="/automation-a" * 157)  # {key} is longer than "a": the path is cut at 2048
    hook_run = run(trigger={"path": f"/automation-{key}", "body": {}})
    service_run = run(trigger={"path": f"/webservice-{key}"}, source="web_service")
    no_path = run(trigger={})
    copied = run(trigger={"path": "/automation-{key}"})
    Run.objects.filter(pk=copied.pk).update(steps=[{"id": "v", "output": {"where": [f"/automation-{key}"]}}])
    lookup = LookupRow.objects.create(owner=automation.owner, table="seen", data={"path": f"/webhook/automation-{key}"})

    redact_key_paths.redact_paths(apps, None)

    for row in (stored, unrelated, many_short_keys):
        row.refresh_from_db()
    assert (stored.path, unrelated.path) == ("/webhook/automation-{key}", "/elsewhere")
    assert len(many_short_keys.path) == 2048 and "-a" not in many_short_keys.path.replace("-{key}", "")
    assert Run.objects.get(pk=hook_run.pk).trigger == {"path": "/automation-{key}", "body": {}}
    assert Run.objects.get(pk=service_run.pk).trigger == {"path": "/webservice-{key}"}
    assert Run.objects.get(pk=no_path.pk).trigger == {}
    assert Run.objects.get(pk=copied.pk).steps == [{"id": "v", "output": {"where": ["/automation-{key}"]}}]
    assert LookupRow.objects.get(pk=lookup.pk).data == {"path": "/webhook/automation-{key}"}
