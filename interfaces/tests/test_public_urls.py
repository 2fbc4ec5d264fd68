"""Every public URL of an automation, labelled, for every trigger kind: the list and what import_automation prints."""

import io
import json

import pytest
from django.core.management import call_command
from django.utils import translation

from automations import services
from automations.models import Automation
from interfaces import public_urls
from interfaces.approvals import queues
from interfaces.models import ApprovalQueue, WhiteLabelDomain
from interfaces.whitelabel import domains
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db

APPROVAL_STEP = {"id": "ask", "kind": "approval", "title": "Refund?"}
FIELDS = [{"name": "email", "type": "email"}]


def imported(owner, tmp_path, name: str, trigger: dict, steps=()) -> tuple[Automation, list[str]]:
    """import_automation of a document with this trigger and these steps: (the automation, the lines it printed)."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "trigger": trigger, "steps": list(steps)}))
    out = io.StringIO()
    call_command("import_automation", str(path), owner=owner.username, stdout=out)
    return Automation.objects.get(owner=owner, name=name), out.getvalue().splitlines()[1:]


def kinds(automation) -> list[str]:
    return [url.kind for url in public_urls.public_urls(automation)]


def test_a_url_whose_key_no_longer_opens_is_left_out(owner, tmp_path, settings):
    automation, _ = imported(owner, tmp_path, "Hook", {"type": "webhook"})
    settings.URL_KEY_SECRET = "another secret than the one the keys were made under"
    assert public_urls.public_urls(automation) == []


def test_an_approval_link_is_listed_only_once_its_queue_exists_and_reading_makes_none(owner, make_automation):
    automation = make_automation([APPROVAL_STEP])
    assert kinds(automation) == ["webhook", "web_service"]
    assert not ApprovalQueue.objects.exists()


def test_a_webhook_automation_has_its_webhook_and_web_service_urls(owner, tmp_path):
    automation, lines = imported(owner, tmp_path, "Hook", {"type": "webhook"})
    assert kinds(automation) == ["webhook", "web_service"]
    assert lines == [
        f"webhook URL:     {services.hook_url(automation)}",
        f"web service URL: {services.web_service_url(automation)}",
    ]


def test_a_web_service_automation_has_its_web_service_url_alone(owner, tmp_path, settings):
    automation, lines = imported(owner, tmp_path, "Service", {"type": "web_service"})
    assert lines == [f"web service URL: {services.web_service_url(automation)}"]
    assert services.web_service_url(automation).startswith(settings.HOOKS_URL + "/webservice-")


def test_a_form_automation_has_its_form_url_on_the_owners_white_label_domain(owner, tmp_path, settings):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    domains.forget()
    automation, lines = imported(owner, tmp_path, "Form", {"type": "form", "fields": FIELDS})
    url = services.form_url(automation)
    assert url.startswith("http://forms.acme.example/form/") and lines == [f"form URL:        {url}"]


def test_a_form_that_requires_sign_in_is_listed_on_base_url(owner, tmp_path, settings):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    domains.forget()
    trigger = {"type": "form", "fields": FIELDS, "require_sign_in": True}
    automation, lines = imported(owner, tmp_path, "Signed", trigger)
    assert lines == [f"form URL:        {settings.BASE_URL}/form/{services.form_url(automation).rpartition('/')[2]}"]


def test_a_chat_automation_has_its_widget_url_and_the_tag_that_embeds_it(owner, tmp_path, settings):
    automation, lines = imported(owner, tmp_path, "Chat", {"type": "chat"})
    widget = services.chat_widget_url(automation)
    key = widget.rpartition("/")[2]
    tag = f'<script src="{settings.BASE_URL}/webchat/embed.js?key={key}" defer></script>'
    assert lines == [f"chat widget URL: {widget}", f"chat embed tag:  {tag}"]
    [_, embed] = public_urls.public_urls(automation)
    assert embed.kind == "chat_embed" and embed.url == widget and embed.snippet == tag and embed.text == tag


def test_the_embed_tag_is_on_the_white_label_domain_with_its_widget(owner, tmp_path):
    WhiteLabelDomain.objects.create(owner=owner, domain="chat.acme.example")
    domains.forget()
    automation, lines = imported(owner, tmp_path, "Chat", {"type": "chat"})
    key = services.chat_widget_url(automation).rpartition("/")[2]
    assert (
        lines[1]
        == f'chat embed tag:  <script src="http://chat.acme.example/webchat/embed.js?key={key}" defer></script>'
    )


def test_the_embed_tag_and_the_widget_url_open(client, owner, tmp_path):
    automation, _ = imported(owner, tmp_path, "Chat", {"type": "chat"})
    services.turn_on(automation=automation)
    key = services.chat_widget_url(automation).rpartition("/")[2]
    assert client.get(f"/webchat/{key}").status_code == 200
    assert client.get(f"/webchat/embed.js?key={key}").status_code == 200


def test_an_automation_with_an_approval_step_gets_its_approval_link_at_import(client, owner, tmp_path):
    automation, lines = imported(owner, tmp_path, "Refunds", {"type": "webhook"}, [APPROVAL_STEP])
    link = queues.approval_url(ApprovalQueue.objects.get(automation=automation))
    assert lines == [
        f"webhook URL:     {services.hook_url(automation)}",
        f"web service URL: {services.web_service_url(automation)}",
        f"approval link:   {link}",
    ]
    path, _, query = link.partition("?")
    assert client.get(path.replace("http://testserver", "") + "?" + query).status_code == 200


def test_a_form_automation_with_an_approval_step_lists_both(owner, tmp_path):
    automation, _ = imported(owner, tmp_path, "Form", {"type": "form", "fields": FIELDS}, [APPROVAL_STEP])
    assert kinds(automation) == ["form", "approval_queue"]


def test_importing_again_keeps_the_approval_link(owner, tmp_path):
    _, first = imported(owner, tmp_path, "Refunds", {"type": "webhook"}, [APPROVAL_STEP])
    _, again = imported(owner, tmp_path, "Refunds", {"type": "webhook"}, [APPROVAL_STEP])
    assert first == again and PublicKey.objects.filter(purpose=PublicKey.Purpose.APPROVAL_QUEUE).count() == 1


def test_an_approval_link_sealed_under_another_secret_is_issued_anew_at_import(owner, tmp_path, settings):
    _, first = imported(owner, tmp_path, "Refunds", {"type": "webhook"}, [APPROVAL_STEP])
    settings.URL_KEY_SECRET = "another secret than the one the keys were made under"
    automation, _ = imported(owner, tmp_path, "Refunds", {"type": "webhook"}, [APPROVAL_STEP])
    [approval] = [url for url in public_urls.public_urls(automation) if url.kind == "approval_queue"]
    assert approval.url and f"approval link:   {approval.url}" not in first
    assert queues.queue_for_key(approval.url.rpartition("=")[2]).automation == automation


def test_the_labels_are_translated_for_the_owners_pages(owner, tmp_path):
    automation, _ = imported(owner, tmp_path, "Chat", {"type": "chat"})
    with translation.override("de"):
        assert [str(url.label) for url in public_urls.public_urls(automation)] == [
            "Chat-Widget-URL",
            "Chat-Einbettungs-Tag",
        ]
