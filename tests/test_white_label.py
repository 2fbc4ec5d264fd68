"""White-label domains: accepted as hosts without a restart, serving only the form and chat paths."""

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from interfaces.models import WhiteLabelDomain
from interfaces.whitelabel import domains
from interfaces.whitelabel.names import validate_domain

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]
    settings.SECURE_SSL_REDIRECT = False


def test_an_unknown_host_still_gets_400(client, three_hosts, owner):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    for host in (
        "evil.example",
        "forms.customer.example.evil.example",
        "customer.example",
        "forms.customer.example:8443",
    ):
        assert client.get("/form/anything", HTTP_HOST=host).status_code == 400, host


def test_a_white_label_host_asking_for_a_path_it_does_not_serve_gets_404(client, three_hosts, owner, three_apps):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    for path in ("/", "/catalog/v1/apps", "/admin/", "/login", "/healthz", "/automation?uuid=x", "/moderation?queue=x"):
        response = client.get(path, HTTP_HOST="forms.customer.example")
        assert response.status_code == 404, path
    assert client.get("/catalog/v1/apps", HTTP_HOST="app.example.com").status_code == 200


def test_a_white_label_host_is_matched_in_any_case_and_with_its_default_port(client, three_hosts, owner):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    for host in ("Forms.Customer.Example", "forms.customer.example:443", "forms.customer.example:80"):
        assert client.get("/nothing", HTTP_HOST=host).status_code == 404, host


def test_a_domain_added_in_admin_answers_without_restart(
    client, staff_client, three_hosts, owner, django_capture_on_commit_callbacks
):
    assert client.get("/nothing", HTTP_HOST="shop.customer.example").status_code == 400  # remembered as unknown
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            "/admin/interfaces/whitelabeldomain/add/",
            {"owner": owner.pk, "domain": "Shop.Customer.Example."},
            HTTP_HOST="app.example.com",
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert WhiteLabelDomain.objects.get().domain == "shop.customer.example"
    assert client.get("/nothing", HTTP_HOST="shop.customer.example").status_code == 404
    row = WhiteLabelDomain.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(
            f"/admin/interfaces/whitelabeldomain/{row.pk}/delete/", {"post": "yes"}, HTTP_HOST="app.example.com"
        )
    assert client.get("/nothing", HTTP_HOST="shop.customer.example").status_code == 400


def test_admin_refuses_a_service_host_or_a_non_host_as_a_domain(staff_client, three_hosts, owner):
    for domain in (
        "app.example.com",
        "hooks.example.com:443",
        "not a host",
        "https://x.example/",
        "localhost",
        "-x.example",
    ):
        response = staff_client.post(
            "/admin/interfaces/whitelabeldomain/add/",
            {"owner": owner.pk, "domain": domain},
            HTTP_HOST="app.example.com",
        )
        assert response.status_code == 200, domain
        assert not WhiteLabelDomain.objects.exists()


def test_urls_are_issued_on_the_accounts_domain_else_on_base_url(three_hosts, owner, another_account):
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    assert domains.public_base_url(owner) == "https://forms.customer.example"
    assert domains.public_base_url(owner.pk) == "https://forms.customer.example"
    assert domains.public_base_url(another_account) == "https://app.example.com"


def test_the_request_names_the_account_of_its_white_label_host(rf, three_hosts, owner):
    from interfaces.whitelabel.domains import WhiteLabelHostMiddleware

    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    seen = {}

    def view(request):
        seen["owner"], seen["host"] = request.white_label_owner_id, request.get_host()

    WhiteLabelHostMiddleware(view)(rf.get("/form/x", HTTP_HOST="forms.customer.example"))
    assert seen == {"owner": owner.pk, "host": "forms.customer.example"}
    WhiteLabelHostMiddleware(view)(rf.get("/form/x", HTTP_HOST="app.example.com"))
    assert seen == {"owner": None, "host": "app.example.com"}


def test_unknown_hosts_cost_no_query_while_the_table_is_remembered(client, three_hosts, django_assert_num_queries):
    client.get("/x", HTTP_HOST="a.unknown.example")
    with django_assert_num_queries(0):
        for n in range(20):
            assert client.get("/x", HTTP_HOST=f"h{n}.unknown.example").status_code == 400


def test_an_unreadable_table_answers_from_the_last_one_read(three_hosts, owner, monkeypatch):
    from django.db import DatabaseError

    from edge import process_cache

    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    assert domains.owner_id_for_host("forms.customer.example") == owner.pk
    process_cache.named("white-label-domains", max_size=1).set("all", domains._domains(), seconds=0)  # expired now

    def unreadable(*args, **kwargs):
        raise DatabaseError("connection refused")

    monkeypatch.setattr(type(WhiteLabelDomain.objects), "values_list", unreadable)
    assert domains.owner_id_for_host("forms.customer.example") == owner.pk
    process_cache.reset_all()
    assert domains.owner_id_for_host("forms.customer.example") is None  # nothing read yet: unknown, not a 500


@given(st.text(max_size=300))
def test_the_domain_check_refuses_or_accepts_any_text_without_crashing(value):
    try:
        validate_domain(value)
    except ValidationError:
        return
    assert " " not in value.strip() and "/" not in value
