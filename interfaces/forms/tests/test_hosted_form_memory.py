"""What a process remembers of a hosted form: its automation for a few seconds, its blank page per version.

"Another process" is played by leaving a change's on-commit callbacks
uncalled: this process then learns of it only when its memory expires,
which a manual clock moves past (no test sleeps).
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations import services as automation_services
from automations.models import Run
from edge import process_cache
from interfaces.forms import blank_pages, selectors, spam
from interfaces.models import WhiteLabelDomain
from interfaces.tests.support import form_path
from publickeys import crypto

pytestmark = pytest.mark.django_db

GOOD = {"email": "ada@example.com", "topic": "sales"}
PER_VISITOR = re.compile(r'(name="(?:csrfmiddlewaretoken|fg-shown)" value=")[^"]+"')


@pytest.fixture
def clock(manual_clock, monkeypatch):
    monkeypatch.setattr(process_cache.registered("interfaces.form_automations"), "clock", manual_clock)
    return manual_clock


def past_the_memory(clock) -> None:
    clock.now += selectors.FORM_MEMORY_SECONDS + 0.001


def test_a_remembered_form_costs_no_query(client, make_form, clock):
    path = form_path(make_form())
    client.get(path)
    with CaptureQueriesContext(connection) as seen:
        assert client.get(path).status_code == 200
    assert seen.captured_queries == []


def test_a_form_turned_off_elsewhere_closes_once_the_memory_expires(client, make_form, clock):
    automation = make_form()
    path = form_path(automation)
    assert client.get(path).status_code == 200
    automation_services.turn_off(automation=automation)  # in another process: this one is not told
    assert client.get(path).status_code == 200  # within its documented staleness
    past_the_memory(clock)
    response = client.get(path)
    assert response.status_code == 503 and b"not accepting answers" in response.content


def test_a_form_edited_elsewhere_shows_its_new_fields_once_the_memory_expires(client, make_form, clock):
    automation = make_form()
    path = form_path(automation)
    assert b'name="topic"' in client.get(path).content
    definition = {**automation.definition}
    definition["trigger"] = {**definition["trigger"], "fields": [{"name": "phone", "type": "text"}]}
    automation_services.update_automation(automation=automation, definition=definition)
    assert b'name="topic"' in client.get(path).content
    past_the_memory(clock)
    page = client.get(path).content
    assert b'name="phone"' in page and b'name="topic"' not in page


def test_a_form_deleted_elsewhere_is_unavailable_once_the_memory_expires(client, make_form, clock):
    automation = make_form()
    path = form_path(automation)
    assert client.get(path).status_code == 200
    automation.delete()
    past_the_memory(clock)
    response = client.get(path)
    assert response.status_code == 404 and b"This form is not available" in response.content


@pytest.mark.parametrize("change", ["turn_off", "delete_automation", "issue_new_urls"])
def test_the_process_that_changes_an_automation_forgets_its_form_at_once(
    client, make_form, clock, change, django_capture_on_commit_callbacks
):
    automation = make_form()
    path = form_path(automation)
    assert client.get(path).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        getattr(automation_services, change)(automation=automation)
    assert client.get(path).status_code in (404, 503)


def test_a_submission_reads_the_automation_afresh(client, make_form, clock):
    automation = make_form()
    path = form_path(automation)
    page = client.get(path).content.decode()
    shown = re.search(r'name="fg-shown" value="([^"]+)"', page).group(1)
    automation_services.turn_off(automation=automation)  # elsewhere, a moment ago
    response = client.post(path, {spam.SHOWN: shown, **GOOD})
    assert response.status_code == 503 and not Run.objects.exists()


def test_a_miss_sends_the_same_statements_whether_or_not_its_key_was_ever_remembered(client, make_form, clock):
    retired, never = make_form(), make_form()
    retired_path, never_path = form_path(retired), form_path(never)
    client.get(retired_path)
    automation_services.issue_new_urls(automation=retired)  # elsewhere: the old key is retired
    never.delete()  # and this one's key was never looked up here
    past_the_memory(clock)
    sent = {}
    for name, path in (("retired", retired_path), ("never", never_path)):
        with CaptureQueriesContext(connection) as seen:
            assert client.get(path).status_code == 404
        digest = crypto.digest(path.rsplit("/", 1)[1])
        moment = r"'[0-9-]+ [0-9:.]+(?:\+00:00)?'"  # the lookup's now, as PostgreSQL or SQLite spells it
        sent[name] = [re.sub(moment, "{now}", q["sql"].replace(digest, "{digest}")) for q in seen]
    assert sent["retired"] == sent["never"] and len(sent["never"]) == 2


def test_misses_are_not_remembered(client, make_form, clock):
    path = form_path(make_form())
    client.get(path)
    for _ in range(2):
        with CaptureQueriesContext(connection) as seen:
            assert client.get(path + "x").status_code == 404
        assert len(seen.captured_queries) == 2
    assert len(selectors._remembered_forms) == 1  # the key found, and no miss


def test_every_visitor_of_the_blank_page_gets_their_own_token_and_shown_time(client, make_form):
    from django.test import Client

    path = form_path(make_form())
    pages = [Client(enforce_csrf_checks=True).get(path) for _ in range(2)]
    values = r'name="(csrfmiddlewaretoken|fg-shown)" value="([^"]+)"'
    tokens = [dict(re.findall(values, page.content.decode())) for page in pages]
    assert tokens[0]["csrfmiddlewaretoken"] != tokens[1]["csrfmiddlewaretoken"]
    assert tokens[0]["fg-shown"] != tokens[1]["fg-shown"]
    assert all("csrftoken" in page.cookies for page in pages)
    assert blank_pages.CSRF_SLOT not in pages[1].content.decode()
    assert blank_pages.SHOWN_SLOT not in pages[1].content.decode()


def test_the_blank_page_is_the_page_rendering_would_give(client, make_form):
    """The remembered page against the same form rendered through its templates (a query string no field takes)."""
    path = form_path(make_form(title="Contact <us>", description="We & you"))
    remembered, rendered = client.get(path), client.get(path + "?nothing=1")
    assert remembered.status_code == rendered.status_code == 200
    assert PER_VISITOR.sub(r"\1", remembered.content.decode()) == PER_VISITOR.sub(r"\1", rendered.content.decode())
    for header in ("Content-Type", "Content-Security-Policy", "Cache-Control", "Content-Language", "Vary"):
        assert remembered[header] == rendered[header], header


def test_the_blank_page_speaks_each_visitor_s_language(client, make_form):
    path = form_path(make_form())
    for accept, language, send in (("de", "de", "Senden"), ("en", "en", "Send"), ("de-DE", "de", "Senden")):
        response = client.get(path, HTTP_ACCEPT_LANGUAGE=accept)
        assert f'<html lang="{language}">' in response.content.decode(), accept
        assert f">{send}</button>" in response.content.decode(), accept
        assert response["Content-Language"] == language


def test_the_blank_page_on_a_white_label_domain_links_to_nothing_that_host_does_not_serve(
    client, make_form, owner, settings
):
    settings.BASE_URL = "https://app.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com"]
    settings.SECURE_SSL_REDIRECT = False
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    path = form_path(make_form())
    on_base = client.get(path, HTTP_HOST="app.example.com", secure=True).content.decode()
    on_domain = client.get(path, HTTP_HOST="forms.acme.example", secure=True).content.decode()
    assert 'href="/" class="name"' in on_base
    assert 'href="/"' not in on_domain and "Flowgate" not in on_domain  # nameless: no name at all


def test_a_signed_in_visitor_s_page_names_them_after_a_signed_out_one_was_remembered(client, make_form, owner):
    from django.test import Client

    path = form_path(make_form())
    assert owner.get_username() not in Client().get(path).content.decode()
    client.force_login(owner)
    page = client.get(path).content.decode()
    assert owner.get_username() in page and "Sign out" in page


def test_a_read_under_way_while_a_change_commits_is_not_remembered(client, make_form, clock, monkeypatch):
    path = form_path(make_form())
    real_lookup = selectors.target_id_for_key

    def lookup_then_a_change_commits(**kwargs):
        found = real_lookup(**kwargs)
        selectors.forget_form_automations()  # admin's save commits between this read's two queries
        return found

    monkeypatch.setattr(selectors, "target_id_for_key", lookup_then_a_change_commits)
    assert client.get(path).status_code == 200
    monkeypatch.setattr(selectors, "target_id_for_key", real_lookup)
    with CaptureQueriesContext(connection) as seen:
        assert client.get(path).status_code == 200
    assert len(seen.captured_queries) == 2  # read again: what the first read saw may predate the change
