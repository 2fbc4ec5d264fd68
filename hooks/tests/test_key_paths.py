"""Deliveries and runs keep the request path with its key as {key} (contract 3: a dump yields no working URL)."""

import importlib
from urllib.parse import urlsplit

import pytest
from django.apps import apps

from automations import services as automation_services
from automations.models import LookupRow, Run
from hooks import deliveries
from hooks.models import Delivery

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


def test_a_web_service_run_keeps_the_path_without_the_key(client, make_automation):
    automation = make_automation(ECHO_PATH)
    path = urlsplit(automation_services.web_service_url(automation)).path
    response = client.post(path, data=b"{}", content_type="application/json")
    assert response.json() == {"path": "/webservice-{key}"}
    assert Run.objects.get().trigger["path"] == "/webservice-{key}"
    assert path.partition("webservice-")[2] not in repr(list(Run.objects.values()))


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
