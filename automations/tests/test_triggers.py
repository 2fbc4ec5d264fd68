"""Trigger kinds as modules: their schema, their URLs, and what changing an automation's trigger type does.

The lifecycle hooks (activate, deactivate, delete) on every path are in test_trigger_lifecycle.py.
"""

from urllib.parse import urlsplit

import pytest

from automations import definition, services, signals, triggers
from automations.triggers import Trigger
from hooks import selectors

pytestmark = pytest.mark.django_db

RECORD = [{"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": 1}}]


def test_every_trigger_type_is_a_module_holding_its_trigger_with_its_schema_and_urls():
    assert set(triggers.types()) == {"webhook", "web_service", "form", "chat", "app_trigger"}
    for type_, trigger in triggers.types().items():
        assert isinstance(trigger, Trigger) and type_ == trigger.TYPE
        assert trigger.SCHEMA["type"] == "object"
        assert set(trigger.URLS) <= {"webhook", "web_service", "form", "chat_widget"}


def test_the_kinds_that_register_nothing_keep_the_bases_hooks_that_do_nothing(make_automation):
    automation = make_automation(RECORD)
    for trigger in (triggers.types()[type_] for type_ in ("webhook", "web_service", "form", "chat")):
        for hook in ("activate", "deactivate", "delete"):
            assert getattr(type(trigger), hook) is getattr(Trigger, hook)
            assert getattr(trigger, hook)(automation) is None


@pytest.mark.parametrize(
    ("trigger", "error"),
    [
        ({"type": "webhook", "path": "x"}, "$.trigger: Additional properties are not allowed ('path' was unexpected)"),
        (
            {"type": "ftp"},
            "$.trigger.type: 'ftp' is not one of ['app_trigger', 'chat', 'form', 'web_service', 'webhook']",
        ),
    ],
)
def test_a_trigger_with_settings_its_type_does_not_have_is_refused_with_its_path(trigger, error):
    assert definition.errors({"trigger": trigger, "steps": []}) == [error]


def test_lifecycle_signals_are_sent_once_the_change_commits(
    make_automation, django_capture_on_commit_callbacks, request
):
    seen = []
    names = {signal: name for name, signal in vars(signals).items() if signal in signals.LIFECYCLE}

    def heard(signal, sender, automation, **_):
        seen.append(names[signal])

    for signal in signals.LIFECYCLE:
        signal.connect(heard, dispatch_uid="test.heard")
    request.addfinalizer(lambda: [signal.disconnect(dispatch_uid="test.heard") for signal in signals.LIFECYCLE])
    automation = make_automation(RECORD, enabled=False)
    with django_capture_on_commit_callbacks() as callbacks:
        services.turn_on(automation=automation)
        services.turn_off(automation=automation)
        services.reset(automation=automation)
    assert seen == []  # nothing before the commit
    for callback in callbacks:
        callback()
    assert seen == ["turned_on", "turned_off", "reset"]
    with django_capture_on_commit_callbacks(execute=True):
        services.delete_automation(automation=automation)
    assert seen[-1] == "deleted"


def test_a_web_service_trigger_has_no_webhook_url(make_automation, client, owner, settings):
    automation = services.create_automation(
        owner=owner, name="API", definition={"trigger": {"type": "web_service"}, "steps": []}, enabled=True
    )
    assert services.hook_url(automation) is None
    assert (
        client.post(
            urlsplit(services.web_service_url(automation)).path, b"{}", content_type="application/json"
        ).status_code
        == 200
    )


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_changing_the_trigger_type_retires_the_urls_the_new_type_does_not_have(make_automation, hooks_client):
    automation = make_automation(RECORD)
    hook, web_service = services.hook_url(automation), services.web_service_url(automation)
    assert hooks_client.post(urlsplit(hook).path, b"{}", content_type="application/json").status_code == 200
    services.update_automation(automation=automation, definition={"trigger": {"type": "web_service"}, "steps": RECORD})
    assert services.hook_url(automation) is None
    assert services.web_service_url(automation) == web_service  # kept
    selectors.forget_hook_keys()  # as HOOK_KEY_MEMORY_SECONDS later: a process remembers a key it saw that long
    assert hooks_client.post(urlsplit(hook).path, b"{}", content_type="application/json").status_code == 404
    services.update_automation(automation=automation, definition={"trigger": {"type": "webhook"}, "steps": RECORD})
    assert services.hook_url(automation) not in (None, hook)  # a new one: the retired key stays retired
    assert services.web_service_url(automation) == web_service


@pytest.mark.parametrize(
    ("trigger", "error"),
    [
        (
            {"type": "chat", "allowed_origins": ["https://shop.example/path"]},
            "$.trigger.allowed_origins[0]: 'https://shop.example/path' is not valid under any of the given schemas",
        ),
        ({"type": "chat", "allowed_origins": []}, "$.trigger.allowed_origins: [] should be non-empty"),
        (
            {"type": "chat", "limits": {"per_ip": "lots"}},
            "$.trigger.limits.per_ip: 'lots' does not match '^[1-9][0-9]{0,5}/(s|m|h|d)$'",
        ),
        ({"type": "chat", "title": ""}, "$.trigger.title: '' should be non-empty"),
    ],
)
def test_a_chat_trigger_with_bad_settings_is_refused_with_their_path(trigger, error):
    assert definition.errors({"trigger": trigger, "steps": []}) == [error]


def test_a_chat_trigger_takes_its_title_welcome_origins_and_limits():
    trigger = {
        "type": "chat",
        "title": "Ask Ada",
        "welcome": "Hi!",
        "allowed_origins": ["https://shop.example", "http://localhost:3000", "https://*.example.org", "*"],
        "limits": {"per_conversation": "10/m", "per_widget": "1000/h", "per_ip": "30/m"},
    }
    assert definition.errors({"trigger": trigger, "steps": []}) == []


def test_a_chat_automation_has_a_chat_widget_url_and_no_webhook(make_automation):
    automation = make_automation(RECORD)
    assert services.hook_url(automation) and services.chat_widget_url(automation) is None
    services.update_automation(automation=automation, definition={"trigger": {"type": "chat"}, "steps": RECORD})
    assert services.chat_widget_url(automation).startswith("http")
    assert services.hook_url(automation) is None and services.web_service_url(automation) is None


def test_a_lifecycle_receiver_that_raises_is_logged_and_the_others_still_hear_it(
    make_automation, django_capture_on_commit_callbacks, request, caplog
):
    heard = []

    def broken(sender, **_):
        raise RuntimeError("a receiver's fault")

    def listening(sender, automation, **_):
        heard.append(automation.pk)

    signals.turned_on.connect(broken, dispatch_uid="test.broken")
    signals.turned_on.connect(listening, dispatch_uid="test.listening")
    request.addfinalizer(
        lambda: [signals.turned_on.disconnect(dispatch_uid=uid) for uid in ("test.broken", "test.listening")]
    )
    automation = make_automation(RECORD, enabled=False)
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_on(automation=automation)
    assert heard == [automation.pk]
    assert f"raised for automation {automation.pk}" in caplog.text
