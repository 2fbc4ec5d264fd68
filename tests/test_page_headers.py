"""Every page: a Content-Security-Policy without inline script, and X-Frame-Options DENY unless framed on purpose."""

import re

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from edge.page_headers import ContentSecurityPolicyMiddleware, framed_by

pytestmark = pytest.mark.django_db


def _directives(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


@pytest.mark.parametrize("path", ["/", "/signup", "/login", "/admin/login/"])
def test_every_page_has_a_policy_without_inline_script_and_refuses_frames(client, path):
    response = client.get(path)
    assert response.status_code == 200
    policy = _directives(response)
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["form-action"] == "'self'"
    assert policy["base-uri"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"


def test_pages_carry_no_inline_script_or_style(client):
    for path in ("/", "/signup", "/login"):
        html = client.get(path).content.decode()
        assert "<script>" not in html and "<style" not in html and " style=" not in html, path


def test_json_answers_get_no_page_policy(client, three_apps):
    response = client.get("/catalog/v1/apps")
    assert response.status_code == 200
    assert "Content-Security-Policy" not in response


def _run(view, origins):
    middleware = ContentSecurityPolicyMiddleware(framed_by(lambda request: origins)(view))
    return middleware(RequestFactory().get("/webchat/x"))


def _page(request):
    return HttpResponse("<p>hi</p>")


def test_a_framed_page_names_its_allowed_origins_and_drops_x_frame_options():
    response = _run(_page, ["https://shop.example", "https://blog.example:8443"])
    assert _directives(response)["frame-ancestors"] == "https://shop.example https://blog.example:8443"
    assert response.xframe_options_exempt is True
    assert _directives(response)["script-src"] == "'self'"


def test_a_framed_page_open_to_any_origin_allows_web_pages_only():
    response = _run(_page, ["*"])
    assert _directives(response)["frame-ancestors"] == "https: http:"


def test_a_framed_page_without_origins_stays_unframeable():
    response = _run(_page, [])
    assert _directives(response)["frame-ancestors"] == "'none'"
    assert not getattr(response, "xframe_options_exempt", False)


def test_a_view_that_writes_its_own_policy_keeps_it():
    def own(request):
        response = HttpResponse("<p>hi</p>")
        response["Content-Security-Policy"] = "default-src 'none'"
        return response

    response = ContentSecurityPolicyMiddleware(own)(RequestFactory().get("/"))
    assert response["Content-Security-Policy"] == "default-src 'none'"


def test_an_empty_answer_gets_no_page_headers():
    response = ContentSecurityPolicyMiddleware(lambda request: HttpResponse(status=200))(RequestFactory().post("/"))
    assert "Content-Security-Policy" not in response


# Admin's policy, pinned: the strict one of every page. Django's admin needs no inline script and no inline
# style (its scripts set styles through the CSSOM, which style-src does not govern), and the service's own admin
# output uses classes of static/flowgate-admin.css: no 'unsafe-inline' anywhere.
ADMIN_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def _admin_pages(staff_client, make_automation) -> list[str]:
    """Every registered model's changelist and add form, and an automation's and a run's change form."""
    from django.contrib import admin

    from automations.models import Run

    automation = make_automation(name="Pinned")
    run = Run.objects.create(automation=automation, source="webhook", status="waiting", definition={}, steps=[])
    pages = ["/admin/", f"/admin/automations/automation/{automation.pk}/change/"]
    pages.append(f"/admin/automations/run/{run.pk}/change/")
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        pages += [base, base + "add/"]
    return pages


def test_admin_pages_get_the_strict_policy(staff_client, make_automation):
    for path in _admin_pages(staff_client, make_automation):
        response = staff_client.get(path)
        if response.status_code == 403:  # an add form of a model nobody adds (Execution History)
            continue
        assert response.status_code == 200, path
        assert response["Content-Security-Policy"] == ADMIN_POLICY, path


def test_admin_pages_carry_no_inline_style_or_script(staff_client, make_automation):
    for path in _admin_pages(staff_client, make_automation):
        html = staff_client.get(path).content.decode()
        assert "<style" not in html and " style=" not in html, path
        inline_scripts = re.findall(r"<script(?![^>]*\b(?:src=|type=\"application/json\"))[^>]*>", html)
        assert inline_scripts == [], path


@pytest.mark.parametrize("already", [{}, {"Cache-Control": "max-age=60, public"}, {"Expires": "0"}])
def test_the_cheaper_never_cache_writes_exactly_what_django_s_writes(monkeypatch, already):
    from django.utils import cache as django_cache
    from django.views.decorators.cache import never_cache as django_never_cache

    from edge import page_headers

    monkeypatch.setattr(django_cache.time, "time", lambda: 1_800_000_000.25)
    monkeypatch.setattr(page_headers.time, "time", lambda: 1_800_000_000.25)

    def view(request):
        response = HttpResponse("page")
        for name, value in already.items():
            response[name] = value
        return response

    request = RequestFactory().get("/")
    ours, django_s = page_headers.never_cache(view)(request), django_never_cache(view)(request)
    assert dict(ours.headers) == dict(django_s.headers)


def test_a_page_whose_address_holds_a_key_never_sends_it_to_another_site_as_its_referer(client):
    """Approval links carry their key in the query string: same-origin sends no Referer to any other site."""
    for path in ("/moderation?queue=" + "A" * 32, "/", "/form/" + "A" * 32, "/webchat/" + "A" * 32):
        assert client.get(path)["Referrer-Policy"] == "same-origin", path
