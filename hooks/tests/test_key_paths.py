"""Deliveries and runs keep the request path with its key as {key} (DESIGN.md contract 3: a dump yields no working URL)."""
import importlib
from urllib.parse import urlsplit

import pytest
from django.apps import apps
from django.test import Client

from automations import services as automation_services
from automations.models import Run
from hooks import services
from hooks.models import Delivery

pytestmark = pytest.mark.django_db

ECHO_PATH = [{"id": "answer", "kind": "respond", "body": {"path": "{{trigger.path}}"}}]
redact_key_paths = importlib.import_module("hooks.migrations.0003_redact_key_paths")


@pytest.fixture(params=["wsgi entry", "django view"])
def client(request):
    return request.getfixturevalue("entry_client") if request.param == "wsgi entry" else Client()


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
    services.process_delivery(delivery_id=delivery.pk)
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
    stored = Delivery.objects.create(automation=automation, method="POST", path=f"/webhook/automation-{key}",
                                     body=b"", body_digest="0" * 64)
    unrelated = Delivery.objects.create(automation=automation, method="POST", path="/elsewhere", body=b"", body_digest="0" * 64)
    hook_run = Run.objects.create(automation=automation, source="webhook", trigger={"path": f"/automation-{key}", "body": {}})
    service_run = Run.objects.create(automation=automation, source="web_service", trigger={"path": f"/webservice-{key}"})
    no_path = Run.objects.create(automation=automation, source="webhook", trigger={})
    short = Delivery.objects.create(automation=automation, method="POST", path="/automation-a" * 157, body=b"",
                                    body_digest="0" * 64)

    redact_key_paths.redact_paths(apps, None)

    stored.refresh_from_db(), unrelated.refresh_from_db(), short.refresh_from_db()
    assert (stored.path, unrelated.path) == ("/webhook/automation-{key}", "/elsewhere")
    assert len(short.path) == 2048 and "-a" not in short.path.replace("-{key}", "")
    assert Run.objects.get(pk=hook_run.pk).trigger == {"path": "/automation-{key}", "body": {}}
    assert Run.objects.get(pk=service_run.pk).trigger == {"path": "/webservice-{key}"}
    assert Run.objects.get(pk=no_path.pk).trigger == {}
