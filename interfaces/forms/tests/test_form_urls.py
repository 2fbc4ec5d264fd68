"""Where a hosted form's URL is issued and served: BASE_URL, or the owner's white-label domain."""

import pytest
from django.core.management import call_command

from automations import services as automation_services
from interfaces.forms import spam
from interfaces.models import WhiteLabelDomain
from interfaces.tests.support import shown_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com"]
    settings.SECURE_SSL_REDIRECT = False


def test_a_form_url_is_on_base_url_without_a_white_label_domain(hosts, make_form):
    url = automation_services.form_url(make_form())
    assert url.startswith("https://app.example.com/form/") and len(url) > 50


def test_a_form_url_is_on_the_owner_s_white_label_domain_and_served_there(
    hosts, client, make_form, owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    from interfaces.whitelabel import domains

    domains.forget()
    automation = make_form()
    url = automation_services.form_url(automation)
    assert url.startswith("https://forms.acme.example/form/")
    path = url.split("forms.acme.example", 1)[1]
    on_domain = {"HTTP_HOST": "forms.acme.example", "secure": True}
    data = {spam.SHOWN: shown_token(client, path, **on_domain), "email": "a@b.example", "topic": "sales"}
    sent = client.post(path, data, HTTP_HOST="forms.acme.example", secure=True)
    assert sent.status_code == 303 and sent["Location"].startswith("run/")  # the session page, on the same domain
    session = client.get(f"/form/{sent['Location']}", **on_domain)
    assert session.status_code == 200
    state = client.get(f"/form/{sent['Location']}/state", **on_domain)
    assert state.status_code == 200 and state.json()["state"] in ("busy", "done")


def test_a_white_label_domain_answers_another_account_s_session_page_as_a_key_never_issued(
    hosts, client, make_form, owner, another_account
):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    WhiteLabelDomain.objects.create(owner=another_account, domain="forms.other.example")
    path = automation_services.form_url(make_form(user=another_account)).split("forms.other.example", 1)[1]
    on_other = {"HTTP_HOST": "forms.other.example", "secure": True}
    data = {spam.SHOWN: shown_token(client, path, **on_other), "email": "a@b.example", "topic": "sales"}
    session = "/form/" + client.post(path, data, **on_other)["Location"]
    assert client.get(session, **on_other).status_code == 200
    assert client.get(session, HTTP_HOST="forms.acme.example", secure=True).status_code == 404
    assert client.get(session + "/state", HTTP_HOST="forms.acme.example", secure=True).status_code == 404
    assert client.get(session, HTTP_HOST="app.example.com", secure=True).status_code == 200


def test_a_white_label_domain_answers_another_account_s_form_as_a_key_never_issued(
    hosts, client, make_form, owner, another_account
):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    from interfaces.whitelabel import domains

    domains.forget()
    path = "/form/" + automation_services.form_url(make_form(user=another_account)).rsplit("/", 1)[1]
    assert client.get(path, HTTP_HOST="forms.acme.example", secure=True).status_code == 404
    assert client.get(path, HTTP_HOST="app.example.com", secure=True).status_code == 200


def test_import_prints_the_form_url(make_form, owner, tmp_path, capsys):
    document = tmp_path / "form.json"
    document.write_text('{"trigger": {"type": "form", "fields": [{"name": "a", "type": "text"}]}, "steps": []}')
    call_command("import_automation", str(document), owner="owner", name="Imported")
    assert "form URL:        http" in capsys.readouterr().out


def test_a_form_that_requires_sign_in_is_issued_and_served_on_base_url_where_sign_in_lives(
    hosts, client, make_form, owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        WhiteLabelDomain.objects.create(owner=owner, domain="forms.acme.example")
    from interfaces.whitelabel import domains

    domains.forget()
    url = automation_services.form_url(make_form(require_sign_in=True))
    assert url.startswith("https://app.example.com/form/")
    path = url.split("app.example.com", 1)[1]
    moved = client.get(path + "?ref=x", HTTP_HOST="forms.acme.example", secure=True)
    assert moved.status_code == 302 and moved["Location"] == f"https://app.example.com{path}?ref=x"
    on_base = client.get(path, HTTP_HOST="app.example.com", secure=True)
    assert on_base.status_code == 302 and on_base["Location"].startswith("/login?next=")
