"""Fixtures shared by every suite: a clean cache and feed memory per test, catalog builders, personas."""

import copy
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.test import Client

from edge import process_cache
from hooks import intake
from tests.processes import HooksProcess, WebProcess

# Other apps standing in for connected ones, shared by the connections' and the owner's pages' tests.
pytest_plugins = ["connections.tests.fixtures"]


@pytest.fixture(autouse=True)
def _clean_state():
    """No test sees another's cache entries (rate-limit counters) or process memories (edge/process_cache.py)."""
    cache.clear()
    process_cache.reset_all()
    yield
    process_cache.reset_all()
    intake.stop()  # its threads hold connections of their own, which would outlive the test database


class ManualClock:
    """A clock for ProcessCache(clock=...) that moves only when a test moves it (now += seconds)."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def manual_clock():
    return ManualClock()


def app_doc(slug: str, **fields) -> dict:
    """One app of an import document, with one trigger and one action unless given."""
    doc = {
        "slug": slug,
        "name": slug.replace("-", " ").title(),
        "description": f"The {slug} app.",
        "category": "CRM",
        "auth_type": "oauth_v2",
        "app_domain": f"{slug}.example",
        "popularity": 100,
        "auth_config": {"client_secret": f"secret-of-{slug}"},
        "logo": {"content_type": "image/png", "base64": "iVBORw0KGgo="},
        "triggers": [
            {
                "key": "new_thing",
                "name": "New Thing",
                "description": "When a thing appears.",
                "endpoint": f"https://internal.{slug}.example/hooks",
                "http_method": "POST",
                "request_template": {"token": "{{internal}}"},
                "delivery_mode": "self_registering",
                "instructions": f"internal-instructions of {slug}: paste the URL under Settings > Webhooks.",
            }
        ],
        "actions": [
            {
                "key": "create_thing",
                "name": "Create Thing",
                "description": "Makes a thing.",
                "endpoint": f"https://internal.{slug}.example/things",
                "http_method": "POST",
            }
        ],
    }
    doc.update(fields)
    return copy.deepcopy(doc)


@pytest.fixture
def make_catalog(db):
    """Import apps (each a dict from app_doc) and build the feed; returns the import report."""
    from catalog.feed import build_feed
    from catalog.importer import import_catalog

    def make(*apps: dict, build: bool = True):
        report = import_catalog({"apps": list(apps)})
        if build:
            build_feed()
        return report

    return make


@pytest.fixture
def three_apps(make_catalog):
    make_catalog(
        app_doc("alpha", popularity=300),
        app_doc("beta", popularity=200),
        app_doc("gamma", popularity=0, logo=None, triggers=[], actions=[]),
    )
    return ["alpha", "beta", "gamma"]


@pytest.fixture
def staff_client(client, django_user_model):
    """A signed-in staff member with every permission (the admin persona)."""
    user = django_user_model.objects.create_superuser("staff", "staff@example.com", "pw-staff-123")
    client.force_login(user)
    return client


@pytest.fixture
def owner(django_user_model):
    """An account that owns automations."""
    return django_user_model.objects.create_user("owner", "owner@example.com", "pw-owner-123")


@pytest.fixture
def another_account(django_user_model):
    """A second account beside the owner; make_automation(user=another_account) gives it automations of its own."""
    return django_user_model.objects.create_user("another", "another@example.com", "pw-another-123")


@pytest.fixture
def make_automation(owner):
    """Create an automation (on unless told) from a list of steps and optional settings."""
    from automations import services

    def make(steps=(), *, enabled=True, settings=None, name="Test automation", user=None):
        definition = {"trigger": {"type": "webhook"}, "steps": list(steps), "settings": settings or {}}
        return services.create_automation(owner=user or owner, name=name, definition=definition, enabled=enabled)

    return make


@pytest.fixture
def trigger_hooks(monkeypatch):
    """Every trigger kind, replaced by a subclass that records its hooks in .calls as (hook, type, automation pk).

    activate writes a lookup row first (inside the caller's transaction), then refuses with .refuse when it is set;
    delete records in .row_at_delete whether the automation's row was still there.
    """
    from automations import triggers
    from automations.models import Automation, LookupRow

    recorder = SimpleNamespace(calls=[], refuse=None, row_at_delete=None)

    def recording(kind: type) -> type:
        class Recording(kind):
            def activate(self, automation):
                recorder.calls.append(("activate", self.TYPE, automation.pk))
                LookupRow.objects.create(owner=automation.owner, automation=automation, table="activated", data={})
                if recorder.refuse:
                    raise triggers.TriggerRefused(recorder.refuse)

            def deactivate(self, automation):
                recorder.calls.append(("deactivate", self.TYPE, automation.pk))

            def delete(self, automation):
                recorder.calls.append(("delete", self.TYPE, automation.pk))
                recorder.row_at_delete = Automation.objects.filter(pk=automation.pk).exists()

        return Recording

    for type_, trigger in list(triggers.types().items()):
        monkeypatch.setitem(triggers.types(), type_, recording(type(trigger))())
    return recorder


@pytest.fixture
def eager_tasks():
    """Celery tasks run in the calling process, as a worker would run them (the whole path without a worker)."""
    from config.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def sent_deliveries(monkeypatch):
    """The id lists the intake hands Celery as hooks.process_deliveries messages, kept here instead of reaching the
    broker: the test runs what it needs itself."""
    from hooks import tasks

    sent = []
    monkeypatch.setattr(tasks.process_deliveries, "apply_async", lambda args, **options: sent.append(list(args[0])))
    return sent


@pytest.fixture
def web_client():
    """A test client whose requests go through config.wsgi.application, as the web process serves them."""
    # Imported before the test runs: its first import sets Django up again, which reconfigures logging and would
    # drop caplog's handler in the middle of a test.
    import config.wsgi  # noqa: F401

    client = Client()
    client.handler = WebProcess()
    return client


@pytest.fixture
def hooks_client():
    """A test client whose requests go through config.asgi.application, as the hooks process serves them."""
    import config.asgi  # noqa: F401  (imported before the test runs, as config.wsgi is above)

    client = Client()
    client.handler = HooksProcess()
    return client


@pytest.fixture(params=["web process", "hooks process"])
def through(request):
    """Run a test through both kinds of process: the web process's Django, and Django behind the hooks process."""
    return request.getfixturevalue("web_client" if request.param == "web process" else "hooks_client")
