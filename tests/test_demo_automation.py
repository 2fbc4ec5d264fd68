"""`make run`'s demo automations: imported and turned on at the first start only; later starts print their URLs."""

import io
from urllib.parse import urlsplit

import pytest

from accounts.first_admin import ensure_first_admin
from automations import services
from automations.models import Automation
from interfaces.demo_automations import ensure_demo_automation

pytestmark = pytest.mark.django_db


def _start() -> str:
    out = io.StringIO()
    ensure_demo_automation(out)
    return out.getvalue()


RECORD = "Demo: record and answer"
APPROVAL = "Demo: approve a refund"


def _urls(output: str, name: str = RECORD) -> list[str]:
    """The URL lines printed for the demo of this name (each demo's lines follow the line naming it)."""
    section = output.split(repr(name), 1)[1].split("automation ", 1)[0]
    return [line for line in section.splitlines() if line.startswith(("webhook URL:", "web service URL:"))]


def test_the_first_start_imports_the_demo_and_turns_it_on():
    ensure_first_admin()
    output = _start()
    demo = Automation.objects.get(name=RECORD)
    assert demo.enabled
    assert f"created automation {demo.pk}" in output
    assert _urls(output) == [
        f"webhook URL:     {services.hook_url(demo)}",
        f"web service URL: {services.web_service_url(demo)}",
    ]


def test_a_later_start_leaves_the_demo_as_admin_left_it_and_prints_the_same_urls():
    ensure_first_admin()
    first = _start()
    demo = Automation.objects.get(name=RECORD)
    services.turn_off(automation=demo)
    later = _start()
    demo.refresh_from_db()
    assert not demo.enabled
    assert Automation.objects.count() == 4
    assert f"demo automation {demo.pk} 'Demo: record and answer' (off): imported before, left as it is" in later
    assert _urls(later) == _urls(first)


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_a_start_under_another_url_key_secret_issues_the_demos_new_urls_that_work(client, hooks_client, settings):
    ensure_first_admin()
    _start()
    settings.URL_KEY_SECRET = "another secret than the one the keys were made under"
    later = _start()
    assert not [line for line in later.splitlines() if line.endswith(" None")]  # as printed for a URL it had lost
    assert later.count("new ones issued") == 4
    hook = next(line for line in _urls(later) if line.startswith("webhook URL:")).split()[-1]
    assert hooks_client.post(urlsplit(hook).path, b"{}", content_type="application/json").status_code == 200
    link = next(line for line in later.splitlines() if line.startswith("approval link:")).split()[-1]
    assert client.get(urlsplit(link).path + "?" + urlsplit(link).query).status_code == 200


def test_the_approval_demo_is_imported_on_and_its_approval_link_printed_and_opens(client):
    from interfaces.approvals import queues
    from interfaces.models import ApprovalQueue

    ensure_first_admin()
    first = _start()
    demo = Automation.objects.get(name=APPROVAL)
    assert demo.enabled and [step["kind"] for step in demo.definition["steps"]][0] == "approval"
    link = queues.approval_url(ApprovalQueue.objects.get(automation=demo))
    assert f"approval link:   {link}" in first
    assert _urls(first, APPROVAL)[0] == f"webhook URL:     {services.hook_url(demo)}"
    later = _start()
    assert f"approval link:   {link}" in later and Automation.objects.count() == 4
    parts = urlsplit(link)
    response = client.get(f"{parts.path}?{parts.query}")
    assert response.status_code == 200 and "Nothing is waiting for a decision" in response.content.decode()


def test_the_form_and_chat_demos_are_imported_on_and_their_pages_open(client):
    ensure_first_admin()
    first = _start()
    form_demo = Automation.objects.get(name="Demo: contact form")
    chat_demo = Automation.objects.get(name="Demo: chat helper")
    assert form_demo.enabled and chat_demo.enabled
    form_url, chat_url = services.form_url(form_demo), services.chat_widget_url(chat_demo)
    assert f"form URL:        {form_url}" in first and f"chat widget URL: {chat_url}" in first
    key = chat_url.rpartition("/")[2]
    assert f'<script src="{chat_url.rpartition("/")[0]}/embed.js?key={key}" defer></script>' in first
    later = _start()
    assert f"form URL:        {form_url}" in later and f"chat widget URL: {chat_url}" in later
    form_page = client.get(urlsplit(form_url).path)
    assert form_page.status_code == 200 and "Contact us" in form_page.content.decode()
    assert client.get(urlsplit(chat_url).path).status_code == 200
    assert client.get(f"/webchat/embed.js?key={key}").status_code == 200
