"""/oauth/login, the authorization endpoint: sign-in, consent, and every way a request is refused."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from oauth2_provider.models import Grant

from mcp_auth.models import AppCallback
from mcp_auth.tests.conftest import answer, redirect_params, register, start_flow

pytestmark = pytest.mark.django_db


def test_a_signed_out_visitor_signs_in_on_login_and_comes_back_to_the_consent_page(client, approver, agent):
    flow = start_flow(agent)
    response = client.get(flow.url)
    assert response.status_code == 302
    login = urlsplit(response["Location"])
    assert login.path == "/login"
    next_url = parse_qs(login.query)["next"][0]
    assert next_url == flow.url
    signed_in = client.post("/login", {"username": "owner", "password": "pw-owner-123", "next": next_url})
    assert signed_in.status_code == 302 and signed_in["Location"] == flow.url
    page = client.get(signed_in["Location"])
    assert page.status_code == 200
    assert page.templates[0].name == "oauth/consent.html"


def test_the_consent_page_names_the_client_its_redirect_host_and_the_scopes(signed_in):
    agent = register(Client(), client_name="Claude", redirect_uris=["https://claude.ai/api/mcp/auth_callback"])
    flow = start_flow(agent, scope="mcp:tools mcp:automation_builder")
    page = signed_in.get(flow.url)
    text = page.content.decode()
    assert page.status_code == 200
    assert "<strong>Claude</strong> asks to use Flowgate as you (owner)" in text
    assert '<strong class="consent__host">claude.ai</strong>' in text
    assert "Run and inspect your automations" in text and "Create and change your automations" in text
    assert ">Allow</button>" in text and ">Deny</button>" in text
    assert not Grant.objects.exists()


def test_allowing_sends_a_code_and_the_state_back_and_binds_the_grant_to_the_resource(signed_in, agent):
    flow = start_flow(agent, resource="http://testserver")
    response = answer(signed_in, flow)
    assert response["Location"].startswith("http://127.0.0.1:33418/callback?")
    params = redirect_params(response)
    assert params["state"] == "state-123"
    grant = Grant.objects.get()
    assert grant.resource == ["http://testserver"]
    assert grant.code_challenge_method == "S256" and grant.scope == "mcp:tools"


def test_denying_sends_access_denied_back_with_the_state(signed_in, agent):
    params = redirect_params(answer(signed_in, start_flow(agent), allow=False))
    assert params == {"error": "access_denied", "state": "state-123"}
    assert not Grant.objects.exists()


def test_a_user_without_the_mcp_tools_permission_sees_a_refusal_and_the_client_gets_access_denied(client, owner, agent):
    client.force_login(owner)
    flow = start_flow(agent)
    page = client.get(flow.url)
    assert page.status_code == 403
    assert "does not have the “MCP Tools” permission" in page.content.decode()
    assert "Return to Test Agent" in page.content.decode()
    # Even a hand-made "allow" is a denial.
    params = redirect_params(answer(client, flow, allow=True))
    assert params["error"] == "access_denied"
    assert not Grant.objects.exists()


def test_a_staff_member_without_the_permission_is_refused_too(client, django_user_model, agent):
    staff = django_user_model.objects.create_user("helper", password="pw-helper-123", is_staff=True)
    client.force_login(staff)
    assert client.get(start_flow(agent).url).status_code == 403


@pytest.mark.parametrize(
    "resource",
    [
        None,
        "",
        "https://evil.example/mcp",
        "http://testserver/",
        "http://testserver/mcp/",
        "http://TESTSERVER/mcp",
        "http://testserver/mcp?x=1",
        ["http://testserver/mcp", "http://testserver"],
        "not a uri",
    ],
)
def test_a_request_without_this_servers_resource_is_refused_with_invalid_target(signed_in, agent, resource):
    flow = start_flow(agent, resource=resource)
    params = redirect_params(signed_in.get(flow.url))
    assert params["error"] == "invalid_target", params
    assert params["state"] == "state-123"
    assert not Grant.objects.exists()


def test_a_resource_changed_in_the_consent_form_is_refused(signed_in, agent):
    params = redirect_params(answer(signed_in, start_flow(agent), resource="https://evil.example/mcp"))
    assert params["error"] == "invalid_target"
    assert not Grant.objects.exists()


@pytest.mark.parametrize(
    "changes, described",
    [
        ({"code_challenge_method": "plain"}, "S256"),
        ({"code_challenge_method": None}, "S256"),  # PKCE's default is plain
        ({"code_challenge": None}, "challenge"),
        ({"code_challenge_method": "S512"}, "algorithm"),
        ({"code_challenge": "abc"}, "43 base64url"),  # no verifier could ever redeem its code
        ({"code_challenge": "A" * 42 + "="}, "43 base64url"),
    ],
)
def test_a_request_without_an_s256_challenge_is_refused(signed_in, agent, changes, described):
    params = redirect_params(signed_in.get(start_flow(agent, **changes).url))
    assert params["error"] == "invalid_request", params
    assert described in params["error_description"]
    assert not Grant.objects.exists()


def test_plain_slipped_into_the_consent_form_is_refused(signed_in, agent):
    params = redirect_params(answer(signed_in, start_flow(agent), code_challenge_method="plain"))
    assert params["error"] == "invalid_request"
    assert not Grant.objects.exists()


@pytest.mark.parametrize(
    "changes",
    [
        {"redirect_uri": "https://evil.example/callback"},
        {"redirect_uri": "http://127.0.0.1:33418/callback/other"},
        {"redirect_uri": "http://127.0.0.1:33418/callback?extra=1"},
        {"client_id": "no-such-client"},
        {"client_id": "a\x00b"},
    ],
)
def test_an_unregistered_redirect_uri_or_an_unknown_client_gets_a_page_and_no_redirect(signed_in, agent, changes):
    response = signed_in.get(start_flow(agent, **changes).url)
    assert response.status_code in (400, 401)
    assert "Location" not in response
    assert "This connection request cannot be used" in response.content.decode()


def test_a_loopback_redirect_uri_may_use_another_port_at_request_time(signed_in, agent):
    flow = start_flow(agent, redirect_uri="http://127.0.0.1:51234/callback")
    assert answer(signed_in, flow)["Location"].startswith("http://127.0.0.1:51234/callback?code=")


def test_offline_access_is_accepted_and_ignored(signed_in, agent):
    flow = start_flow(agent, scope="mcp:tools offline_access")
    page = signed_in.get(flow.url)
    assert page.status_code == 200 and "offline_access" not in page.content.decode()
    redirect_params(answer(signed_in, flow))
    assert Grant.objects.get().scope == "mcp:tools"
    alone = start_flow(agent, scope="offline_access")
    redirect_params(answer(signed_in, alone))
    assert Grant.objects.latest("pk").scope == "mcp:tools"


def test_an_unknown_scope_is_refused(signed_in, agent):
    assert redirect_params(signed_in.get(start_flow(agent, scope="admin").url))["error"] == "invalid_scope"


def test_an_app_callback_from_the_allow_list_receives_the_code(signed_in, cursor_callback):
    uri = cursor_callback
    assert AppCallback.objects.filter(uri=uri).exists()
    agent = register(Client(), redirect_uris=[uri, "http://localhost:8787/callback"])
    response = answer(signed_in, start_flow(agent, redirect_uri=uri))
    assert response.status_code == 302
    assert response["Location"].startswith(uri + "?code=")


def test_the_consent_form_refuses_a_post_from_another_origin(approver, agent):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(approver)
    flow = start_flow(agent)
    page = browser.get(flow.url)
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields if name != "allow"}
    data.update(allow="on", csrfmiddlewaretoken=page.context["csrf_token"])
    refused = browser.post("/oauth/login", data, HTTP_ORIGIN="https://evil.example")
    assert refused.status_code == 403
    assert not Grant.objects.exists()
    accepted = browser.post("/oauth/login", data, HTTP_ORIGIN="http://testserver")
    assert accepted.status_code == 302 and "code=" in accepted["Location"]


def test_the_consent_page_cannot_be_framed(signed_in, agent):
    page = signed_in.get(start_flow(agent).url)
    assert page["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]


def test_an_incomplete_consent_form_gets_a_page(signed_in, agent):
    response = signed_in.post("/oauth/login", {"allow": "on", "client_id": agent["client_id"]})
    assert response.status_code == 400
    assert "This connection request cannot be used" in response.content.decode()
    assert not Grant.objects.exists()


def test_the_consent_form_may_end_at_the_clients_redirect_uri_and_nowhere_else(signed_in, agent):
    policy = signed_in.get(start_flow(agent).url)["Content-Security-Policy"]
    assert "form-action 'self' http://127.0.0.1:33418;" in policy
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy


def test_a_request_without_a_scope_gets_mcp_tools(signed_in, agent):
    flow = start_flow(agent, scope=None)
    assert "Run and inspect your automations" in signed_in.get(flow.url).content.decode()
    redirect_params(answer(signed_in, flow))
    assert Grant.objects.get().scope == "mcp:tools"


def test_a_client_name_is_shown_as_text(signed_in):
    agent = register(Client(), client_name='<img src=x onerror="alert(1)">')
    text = signed_in.get(start_flow(agent).url).content.decode()
    assert "<img src=x" not in text and "&lt;img src=x" in text
