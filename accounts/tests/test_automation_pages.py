"""Your automations (/account/): an owner sees and changes only their own, through the services admin uses."""

import json

import pytest
from django.db import connection
from django.urls import reverse

from automations.models import Automation
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def page(automation, name="account-automation"):
    return reverse(name, args=[automation.pk])


# Failure paths first.


@pytest.mark.parametrize("name", ["account-automation", "account-definition", "account-export", "account-runs"])
def test_another_owners_automation_is_a_404_on_every_page(signed_in, make_automation, another_account, name):
    theirs = make_automation(user=another_account)
    assert signed_in.get(page(theirs, name)).status_code == 404


@pytest.mark.parametrize("name", ["account-switch", "account-renew-url", "account-definition"])
def test_another_owners_automation_cannot_be_changed(signed_in, make_automation, another_account, name):
    theirs = make_automation(user=another_account, enabled=True)
    before = (theirs.definition, set(PublicKey.objects.filter(target_id=theirs.pk).values_list("digest", flat=True)))
    response = signed_in.post(page(theirs, name), {"state": "off", "purpose": "webhook", "document": "{}"})
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.enabled
    assert (
        theirs.definition,
        set(PublicKey.objects.filter(target_id=theirs.pk).values_list("digest", flat=True)),
    ) == before


def test_signed_out_visitors_are_sent_to_sign_in(client, make_automation):
    automation = make_automation()
    for url in (reverse("account-automations"), page(automation)):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login?next=")


def test_a_get_changes_nothing(signed_in, make_automation):
    automation = make_automation(enabled=True)
    assert signed_in.get(page(automation, "account-switch") + "?state=off").status_code == 405
    automation.refresh_from_db()
    assert automation.enabled


def test_a_post_without_csrf_is_refused(owner, make_automation):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    automation = make_automation(enabled=True)
    assert browser.post(page(automation, "account-switch"), {"state": "off"}).status_code == 403
    automation.refresh_from_db()
    assert automation.enabled


# The list and the page.


def test_the_list_shows_only_the_owners_automations_with_their_state_and_latest_run(
    signed_in, make_automation, another_account
):
    from interfaces.tests.support import deliver

    mine = make_automation([{"id": "answer", "kind": "respond"}], name="Mine")
    make_automation(user=another_account, name="Theirs")
    run = deliver(mine)
    html = signed_in.get(reverse("account-automations")).content.decode()
    assert "Mine" in html and "Theirs" not in html
    assert reverse("account-run", args=[run.pk]) in html
    assert "succeeded" in html and "webhook" in html


def test_turning_off_and_on_goes_through_the_services(signed_in, make_automation):
    automation = make_automation(enabled=True)
    response = signed_in.post(page(automation, "account-switch"), {"state": "off"}, follow=True)
    automation.refresh_from_db()
    assert not automation.enabled
    assert "Webhooks are still accepted" in response.content.decode()
    signed_in.post(page(automation, "account-switch"), {"state": "on", "back": "list"})
    automation.refresh_from_db()
    assert automation.enabled


def test_a_trigger_that_refuses_leaves_it_off_and_says_why(signed_in, make_automation, trigger_hooks):
    automation = make_automation(enabled=False)
    trigger_hooks.refuse = "the other app said no"
    response = signed_in.post(page(automation, "account-switch"), {"state": "on"}, follow=True)
    automation.refresh_from_db()
    assert not automation.enabled
    assert "the other app said no" in response.content.decode()


def test_the_page_shows_every_url_of_its_trigger_with_a_copy_button(signed_in, make_automation):
    from automations import services

    automation = make_automation()
    html = signed_in.get(page(automation)).content.decode()
    for url in (services.hook_url(automation), services.web_service_url(automation)):
        assert f'value="{url}"' in html
    assert html.count("data-copy=") == 2
    assert f"/automation?uuid={automation.uuid}" in html


@pytest.mark.django_db(transaction=True)  # the hooks process's handler reads keys on a connection of its own
def test_renewing_a_url_makes_the_old_one_404(signed_in, make_automation, hooks_client):
    from automations import services

    automation = make_automation([{"id": "answer", "kind": "respond"}])
    old_hook, old_service = services.hook_url(automation), services.web_service_url(automation)
    signed_in.post(page(automation, "account-renew-url"), {"purpose": "webhook"})
    new_hook = services.hook_url(automation)
    assert new_hook != old_hook
    assert services.web_service_url(automation) == old_service  # only the one asked for
    assert hooks_client.post(_path(old_hook), b"{}", content_type="application/json").status_code == 404
    assert hooks_client.post(_path(new_hook), b"{}", content_type="application/json").status_code == 200


def _path(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path


def test_renewing_a_url_its_trigger_does_not_have_is_refused(signed_in, make_automation):
    automation = make_automation()
    response = signed_in.post(page(automation, "account-renew-url"), {"purpose": "form"}, follow=True)
    assert "not one this automation has" in response.content.decode()
    assert not PublicKey.objects.filter(target_id=automation.pk, purpose="form").exists()


# The definition.


def test_the_definition_is_shown_pretty_printed_and_exported_as_a_file(signed_in, make_automation):
    automation = make_automation([{"id": "answer", "kind": "respond"}], name="Orders → CRM")
    html = signed_in.get(page(automation, "account-definition")).content.decode()
    assert "&quot;steps&quot;: [" in html
    export = signed_in.get(page(automation, "account-export"))
    assert export["Content-Disposition"] == 'attachment; filename="orders-crm.json"'
    document = json.loads(export.content)
    assert document == {"name": "Orders → CRM", **automation.definition}
    assert "key" not in export.content.decode().lower()


def test_every_error_of_a_saved_definition_is_listed_with_its_path(signed_in, make_automation):
    automation = make_automation()
    bad = {
        "trigger": {"type": "webhook"},
        "steps": [
            {"id": "a", "kind": "teleport"},
            {"id": "b", "kind": "respond", "body": "{{steps.nowhere.x}}"},
        ],
    }
    response = signed_in.post(page(automation, "account-definition"), {"document": json.dumps(bad)})
    assert response.status_code == 400
    html = response.content.decode()
    assert "$.steps[0].kind" in html and "{{steps.nowhere.x}} refers to no earlier step" in html
    assert "2 errors" in html
    automation.refresh_from_db()
    assert automation.definition["steps"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  "trigger": {"type": "webhook"},\n  "steps": [\n}', "line 4, column 1"),
        ('{"trigger": {"type": "webhook"}, "steps": [], "n": NaN}', "NaN is not a JSON number"),
        ("[" * 5000 + "]" * 5000, "nested too deep"),
        ("", "line 1, column 1"),
    ],
)
def test_text_that_is_not_json_gets_its_line_and_column(signed_in, make_automation, text, expected):
    automation = make_automation()
    response = signed_in.post(page(automation, "account-definition"), {"document": text})
    assert response.status_code == 400
    assert expected in response.content.decode()


@pytest.mark.parametrize(
    ("text", "english", "german"),
    [
        ('{"steps": [1,]}', "a value was expected", "wird ein Wert erwartet"),
        ('{"steps": []', "a comma was expected", "wird ein Komma erwartet"),
        ('{"a": "\\x"}', "a backslash starts no valid escape", "Backslash"),
        ('{"a": 1}}', "more text follows", "folgt weiterer Text"),
    ],
)
def test_a_json_fault_is_said_in_the_owners_language_with_its_line_and_column(
    signed_in, make_automation, text, english, german
):
    automation = make_automation()
    said = signed_in.post(page(automation, "account-definition"), {"document": text}).content.decode()
    assert "line 1, column " in said and english in said and "Expecting" not in said
    path = page(automation, "account-definition")
    said = signed_in.post(path, {"document": text}, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Zeile 1, Spalte " in said and german in said


def test_a_saved_definition_changes_the_automation_and_its_name(signed_in, make_automation):
    automation = make_automation()
    document = {"name": "Renamed", "trigger": {"type": "webhook"}, "steps": [{"id": "answer", "kind": "respond"}]}
    response = signed_in.post(page(automation, "account-definition"), {"document": json.dumps(document)})
    assert response.status_code == 302
    automation.refresh_from_db()
    assert automation.name == "Renamed" and automation.definition["steps"] == document["steps"]


def test_bidirectional_controls_in_a_definition_are_shown_escaped_and_saved_unchanged(signed_in, make_automation):
    automation = make_automation([{"id": "answer", "kind": "respond", "body": "pay \u202eevil"}])
    html = signed_in.get(page(automation, "account-definition")).content.decode()
    assert "\u202e" not in html and "pay \\u202eevil" in html
    text = html.split('name="document"')[1].split(">", 1)[1].split("</textarea>")[0]
    import html as markup

    signed_in.post(page(automation, "account-definition"), {"document": markup.unescape(text)})
    automation.refresh_from_db()
    assert automation.definition["steps"][0]["body"] == "pay \u202eevil"


# Import.


def test_an_imported_document_becomes_a_new_automation_that_is_off(signed_in, owner):
    document = {"name": "From a file", "trigger": {"type": "webhook"}, "steps": []}
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("a.json", json.dumps(document).encode(), content_type="application/json")
    response = signed_in.post(reverse("account-import"), {"file": upload})
    automation = Automation.objects.get(owner=owner, name="From a file")
    assert response["Location"] == page(automation)
    assert not automation.enabled


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"document": '{"trigger": {"type": "webhook"}, "steps": []}'}, "give it a name"),
        ({"document": '{"trigger": {"type": "webhook"}, "steps": []}', "name": "x" * 201}, "at most 200"),
        ({"document": '{"trigger": {"type": "webhook"}, "steps": []}', "name": "a\x00b"}, "at most 200"),
        ({"document": '{"name": "n", "trigger": {"type": "nope"}, "steps": []}'}, "$.trigger.type"),
    ],
)
def test_an_import_refused_creates_nothing_and_says_why(signed_in, owner, fields, expected):
    response = signed_in.post(reverse("account-import"), fields)
    assert response.status_code == 400
    assert expected in response.content.decode()
    assert not Automation.objects.filter(owner=owner).exists()


def test_a_file_and_pasted_text_together_import_the_file_and_the_page_says_so(signed_in, owner):
    from django.core.files.uploadedfile import SimpleUploadedFile

    assert "the text below is then not read" in signed_in.get(reverse("account-import")).content.decode()
    document = {"name": "From the file", "trigger": {"type": "webhook"}, "steps": []}
    upload = SimpleUploadedFile("a.json", json.dumps(document).encode(), content_type="application/json")
    pasted = '{"name": "From the text", "trigger": {"type": "webhook"}, "steps": []}'
    signed_in.post(reverse("account-import"), {"file": upload, "document": pasted})
    assert list(Automation.objects.filter(owner=owner).values_list("name", flat=True)) == ["From the file"]


def test_an_uploaded_file_that_is_not_utf8_is_refused(signed_in, owner):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("a.json", b"\xff\xfe{}", content_type="application/json")
    response = signed_in.post(reverse("account-import"), {"file": upload})
    assert response.status_code == 400 and "not UTF-8" in response.content.decode()


def test_a_chat_automation_shows_its_embed_tag_and_an_approval_one_its_link(signed_in, owner):
    from automations import services
    from interfaces.approvals import queues
    from interfaces.public_urls import embed_tag
    from interfaces.tests.support import ASK_THEN_RECORD

    chat = services.create_automation(
        owner=owner, name="Chat", definition={"trigger": {"type": "chat"}, "steps": []}, enabled=True
    )
    html = signed_in.get(page(chat)).content.decode()
    assert markup_escape(embed_tag(services.chat_widget_url(chat))) in html
    assert html.count('name="purpose" value="chat_widget"') == 1  # the tag goes with the widget's key
    document = {"name": "Refunds", "trigger": {"type": "webhook"}, "steps": ASK_THEN_RECORD}
    signed_in.post(reverse("account-import"), {"document": json.dumps(document)})
    refunds = Automation.objects.get(name="Refunds")
    html = signed_in.get(page(refunds)).content.decode()
    link = queues.approval_url(queues.queue_of(refunds))
    assert f'value="{markup_escape(link)}"' in html  # at once, before any item was placed
    assert 'value="approval_queue"' not in html  # its link is not one the page renews


def markup_escape(text: str) -> str:
    from django.utils.html import escape

    return escape(text)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite's shared in-memory test database refuses a read")
def test_renewing_a_url_while_webhooks_arrive_on_it_loses_none_it_accepted(
    client, owner, make_automation, hooks_client
):
    """Each webhook on the old URL is either accepted and kept (200, its delivery stored) or refused (404): none
    is answered 200 and lost, whether it came before, during or after the renewal."""
    from automations import services
    from hooks.models import Delivery
    from publickeys import selectors as key_selectors
    from tests.races import at_once

    automation = make_automation([{"id": "answer", "kind": "respond"}], enabled=False)  # deliveries are kept
    old = _path(services.hook_url(automation))
    client.force_login(owner)

    def send_ten():  # one sender: the test's hooks process serves one event loop at a time
        return [hooks_client.post(old, b'{"n": 1}', content_type="application/json").status_code for _ in range(10)]

    def renew():
        client.post(page(automation, "account-renew-url"), {"purpose": "webhook"})
        return "renewed"

    ended = at_once(send_ten, renew)
    answers = next(result for result in ended if result != "renewed")
    assert set(answers) <= {200, 404} and len(answers) == 10
    assert Delivery.objects.filter(automation=automation).count() == answers.count(200)
    key_selectors.forget_keys()  # past the hooks process's memory of the old key
    assert hooks_client.post(old, b"{}", content_type="application/json").status_code == 404
