"""A white-label domain's pages show its account's name and logo, never the service's name; its own hosts do not."""

import re

import pytest
from django.test import Client, override_settings

from automations.models import Run
from interfaces.forms import spam
from interfaces.models import WhiteLabelDomain
from interfaces.tests.support import form_path, png, shown_token
from interfaces.whitelabel import domains, logos
from interfaces.whitelabel.views import logo_url

pytestmark = pytest.mark.django_db

HOST = "forms.acme.example"
NAME = "Acme Tools"
ON_DOMAIN = {"HTTP_HOST": HOST, "secure": True}
ON_SERVICE = {"HTTP_HOST": "app.example.com", "secure": True}
GOOD = {"email": "ada@example.com", "topic": "sales"}


@pytest.fixture
def hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]
    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture
def acme(hosts, owner):
    """The owner's domain, with its name and a PNG logo."""
    content = png()
    row = WhiteLabelDomain.objects.create(
        owner=owner,
        domain=HOST,
        name=NAME,
        logo=content,
        logo_content_type="image/png",
        logo_digest=logos.digest_of(content),
    )
    domains.forget()
    return row


def assert_branded(response, *, name: str = NAME, logo: bool = True) -> None:
    """The account's name and logo where the service's name would be, and the service's name nowhere."""
    html = response.content.decode()
    assert "Flowgate" not in html, re.findall(r".{60}Flowgate.{60}", html)
    if logo:
        digest = WhiteLabelDomain.objects.get(domain=HOST).logo_digest
        assert f'<img class="brand__logo" src="{logo_url(digest)}" alt="{name}">' in html
    hidden = ' aria-hidden="true"' if logo else ""
    assert f'<span class="brand__name" dir="auto"{hidden}>{name}</span>' in html
    assert f" · {name}</title>" in html


def submitted(client, path: str, **extra):
    data = {spam.SHOWN: shown_token(client, path, **ON_DOMAIN), **GOOD, **extra}
    return client.post(path, data, **ON_DOMAIN)


# The service's own hosts first: nothing changes there.


def test_the_service_s_own_host_still_shows_its_own_name(client, acme, make_form):
    path = form_path(make_form())
    page = client.get(path, **ON_SERVICE)
    assert page.status_code == 200
    assert '<a href="/" class="name">Flowgate</a>' in page.content.decode()
    assert NAME.encode() not in page.content and b"brand__logo" not in page.content
    assert b'href="/static/favicon.svg"' in page.content


def test_the_chat_page_on_the_service_s_own_host_shows_no_brand(client, acme, make_chat):
    _, key = make_chat()
    page = client.get(f"/webchat/{key}", **ON_SERVICE)
    assert page.status_code == 200 and NAME.encode() not in page.content and b"brand" not in page.content


def test_another_account_s_form_on_the_service_host_shows_no_brand(client, acme, make_form, another_account):
    page = client.get(form_path(make_form(user=another_account)), **ON_SERVICE)
    assert b"Flowgate" in page.content and NAME.encode() not in page.content


# Each kind of page of the domain.


def test_the_form_page_blank_prefilled_and_with_errors_shows_the_account(client, acme, make_form):
    path = form_path(make_form())
    assert_branded(client.get(path, **ON_DOMAIN))
    assert_branded(client.get(path + "?email=a@b.example", **ON_DOMAIN))
    refused = client.post(path, {spam.SHOWN: shown_token(client, path, **ON_DOMAIN)}, **ON_DOMAIN)
    assert refused.status_code == 400
    assert_branded(refused)


def test_a_blank_form_remembered_shows_a_changed_name_at_once(client, acme, make_form, owner):
    path = form_path(make_form())
    assert_branded(client.get(path, **ON_DOMAIN))
    WhiteLabelDomain.objects.filter(pk=acme.pk).update(name="Acme Renamed")
    domains._memory.pop("all")  # as forget() does once the owner's save commits
    assert_branded(client.get(path, **ON_DOMAIN), name="Acme Renamed")


def test_the_unavailable_page_shows_the_account(client, acme):
    page = client.get("/form/" + "x" * 32, **ON_DOMAIN)
    assert page.status_code == 404
    assert_branded(page)


def test_the_closed_refused_too_large_and_too_many_pages_show_the_account(client, acme, make_form):
    closed = client.get(form_path(make_form(enabled=False)), **ON_DOMAIN)
    assert closed.status_code == 503
    assert_branded(closed)
    path = form_path(make_form())
    honeypot = submitted(client, path, **{spam.HONEYPOT: "spam"})
    assert honeypot.status_code == 400
    assert_branded(honeypot)
    too_large = client.post(path, b"x", content_type="text/plain", CONTENT_LENGTH="", **ON_DOMAIN)
    assert too_large.status_code == 411
    assert_branded(too_large)
    with override_settings(FORM_RATE_IP="1/m"):
        client.post(path, GOOD, **ON_DOMAIN)
        too_many = client.post(path, GOOD, **ON_DOMAIN)
    assert too_many.status_code == 429
    assert_branded(too_many)


def test_a_page_sent_while_its_first_is_still_being_sent_shows_the_account(client, acme, make_form, monkeypatch):
    from interfaces.forms import submissions

    monkeypatch.setattr(submissions, "claim", lambda page: None)
    monkeypatch.setattr(submissions, "first_run_id", lambda page: None)
    sending = submitted(client, form_path(make_form()))
    assert sending.status_code == 409
    assert_branded(sending)


def test_the_session_page_is_on_the_domain_and_shows_the_account_in_each_state(
    client, acme, make_form, django_capture_on_commit_callbacks
):
    path = form_path(make_form([{"id": "more", "kind": "form", "fields": [{"name": "size", "type": "text"}]}]))
    with django_capture_on_commit_callbacks(execute=False):
        sent = submitted(client, path)
    assert sent.status_code == 303 and sent["Location"].startswith("run/")
    session = "/form/" + sent["Location"]
    busy = client.get(session, **ON_DOMAIN)
    assert busy.status_code == 200 and b"data-session-state" in busy.content
    assert_branded(busy)
    run = Run.objects.get()
    run.status, run.waiting_for = (
        Run.Status.WAITING,
        {"kind": "form", "to": "session", "step": "more", "form": {"fields": [{"name": "size", "type": "text"}]}},
    )
    run.save()
    asking = client.get(session, **ON_DOMAIN)
    assert b'name="fg-step" value="more"' in asking.content
    assert_branded(asking)
    for status, words in ((Run.Status.SUCCEEDED, b"Thank you"), (Run.Status.FAILED, b"Something went wrong")):
        Run.objects.filter(pk=run.pk).update(status=status, waiting_for=None)
        ended = client.get(session, **ON_DOMAIN)
        assert words in ended.content
        assert_branded(ended)


def test_the_chat_page_and_its_notices_show_the_account(client, acme, make_chat, settings):
    _, key = make_chat()
    page = client.get(f"/webchat/{key}", **ON_DOMAIN)
    assert page.status_code == 200
    assert_branded(page)
    script = client.get(f"/webchat/embed.js?key={key}", **ON_DOMAIN)
    assert script.status_code == 200 and b"Flowgate" not in script.content  # the script a customer's site loads
    _, closed_key = make_chat(enabled=False)
    unavailable = client.get(f"/webchat/{closed_key}", **ON_DOMAIN)
    assert unavailable.status_code == 503
    assert_branded(unavailable)
    settings.CHAT_RATE_PAGE_IP = "1/m"
    client.get(f"/webchat/{key}", **ON_DOMAIN)
    too_many = client.get(f"/webchat/{key}", **ON_DOMAIN)
    assert too_many.status_code == 429
    assert_branded(too_many)


def test_the_error_pages_show_the_account(client, acme, make_form):
    missing = client.get("/admin/", **ON_DOMAIN)
    assert missing.status_code == 404
    assert_branded(missing)
    strict = Client(enforce_csrf_checks=True)
    forged = strict.post(form_path(make_form()), GOOD, **ON_DOMAIN)
    assert forged.status_code == 403
    assert_branded(forged)


def test_the_service_s_own_error_pages_stay_django_s(client, acme, make_form):
    missing = client.get("/nothing-here", **ON_SERVICE)
    assert missing.status_code == 404 and NAME.encode() not in missing.content
    strict = Client(enforce_csrf_checks=True)
    forged = strict.post(form_path(make_form()), GOOD, **ON_SERVICE)
    assert forged.status_code == 403 and b"CSRF verification failed" in forged.content
    assert NAME.encode() not in forged.content


def test_a_name_s_bidirectional_controls_are_neutralised(client, acme, make_form):
    WhiteLabelDomain.objects.filter(pk=acme.pk).update(name="Acme \u202eslooT")
    domains._memory.pop("all")
    page = client.get(form_path(make_form()), **ON_DOMAIN).content.decode()
    assert "\u202e" not in page and "slooT" in page


def test_the_server_error_page_shows_the_account(client, acme, monkeypatch):
    from interfaces.whitelabel import selectors

    def broken(owner_id):
        raise RuntimeError("the logo could not be read")

    monkeypatch.setattr(selectors, "logo_of", broken)
    client.raise_request_exception = False
    failed = client.get("/brand/logo", **ON_DOMAIN)
    assert failed.status_code == 500
    assert_branded(failed)


def test_without_a_name_the_pages_show_the_logo_alone_and_without_either_nothing(client, acme, make_form):
    path = form_path(make_form())
    WhiteLabelDomain.objects.filter(pk=acme.pk).update(name="")
    domains._memory.pop("all")
    page = client.get(path, **ON_DOMAIN).content.decode()
    assert "Flowgate" not in page and 'class="brand__logo"' in page and 'alt=""' in page
    assert "brand__name" not in page and "<title>Form</title>" in page
    WhiteLabelDomain.objects.filter(pk=acme.pk).update(logo=None, logo_content_type="", logo_digest="")
    domains._memory.pop("all")
    page = client.get(path, **ON_DOMAIN).content.decode()
    assert "Flowgate" not in page and "brand" not in page and 'rel="icon"' not in page


# The logo itself.


def test_the_domain_has_no_logo_to_serve_when_none_was_set(client, acme):
    WhiteLabelDomain.objects.filter(pk=acme.pk).update(logo=None, logo_content_type="", logo_digest="")
    domains._memory.pop("all")
    assert client.get("/brand/logo", **ON_DOMAIN).status_code == 404


def test_the_logo_is_not_served_on_the_service_s_hosts_under_the_domain_s_path(client, acme):
    assert client.get("/brand/logo", **ON_SERVICE).status_code == 404


def test_the_logo_is_served_as_its_checked_type_never_sniffed_with_an_etag(client, acme):
    served = client.get("/brand/logo", **ON_DOMAIN)
    assert served.status_code == 200 and served.content == png()
    assert served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff"
    assert served["ETag"] == f'"{acme.logo_digest}"'
    assert served["Cache-Control"] == "public, no-cache"
    versioned = client.get(logo_url(acme.logo_digest), **ON_DOMAIN)
    assert versioned["Cache-Control"] == "public, max-age=86400"


def test_a_cache_holding_the_logo_gets_304_without_a_query(client, acme, django_assert_num_queries):
    client.get("/brand/logo", **ON_DOMAIN)  # the domains' table read
    with django_assert_num_queries(0):
        again = client.get("/brand/logo", HTTP_IF_NONE_MATCH=f'"{acme.logo_digest}"', **ON_DOMAIN)
    assert again.status_code == 304 and again.content == b""
    changed = client.get("/brand/logo", HTTP_IF_NONE_MATCH='"an-older-logo"', **ON_DOMAIN)
    assert changed.status_code == 200
