"""Pages of BASE_URL outside the apps: home, the feed's connect_url and root, the docs, admin's View site."""

import json
import re

import pytest
from django.contrib.staticfiles import finders

from catalog.bulk import build_bulk
from conftest import app_doc

pytestmark = pytest.mark.django_db


def _links(html: str) -> list[str]:
    """Every href and src of a page but links within it (the skip-to-content link's #content)."""
    return [link for link in re.findall(r'(?:href|src)="([^"]+)"', html) if not link.startswith("#")]


def test_the_home_page_says_what_this_is_and_every_link_on_it_answers(client, three_apps):
    build_bulk()
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "The public edge of a workflow-automation platform" in html
    links = _links(html)
    for path in ("/catalog/v1/apps", "/catalog/v1/openapi.json", "/catalog/v1/", "/docs/catalog-feed.md"):
        assert path in links
    for link in links:
        if link.startswith("/static/"):  # whitenoise serves them from collectstatic's copy
            assert finders.find(link.removeprefix("/static/")), link
        else:  # admin sends a signed-out visitor to its sign-in page
            assert client.get(link, follow=True).status_code == 200, link


def test_pages_load_nothing_from_another_site(client, make_catalog):
    make_catalog(app_doc("alpha"))
    for path in ("/", "/signup?app=alpha", "/signup"):
        links = _links(client.get(path).content.decode())
        assert links and all(link.startswith("/") for link in links), (path, links)
        assert "/static/favicon.svg" in links  # its icon, so that browsers do not ask for a /favicon.ico (404)


def test_admins_view_site_leads_to_the_home_page(staff_client):
    admin = staff_client.get("/admin/").content.decode()
    assert '<a href="/">View site</a>' in admin
    assert staff_client.get("/").status_code == 200


def test_the_feeds_connect_url_names_the_app_and_how_to_get_an_account(client, make_catalog):
    make_catalog(app_doc("acorn-crm", name="Acorn CRM"))
    connect_url = json.loads(client.get("/catalog/v1/apps").content)["apps"][0]["connect_url"]
    assert connect_url == "http://testserver/signup?app=acorn-crm"
    response = client.get(connect_url)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Connect Acorn CRM" in html
    assert "an administrator of this Flowgate makes accounts" in html
    assert 'href="/login?next=%2F%3Fapp%3Dacorn-crm"' in html and "admin/login" not in html


def test_signup_for_an_app_the_catalog_does_not_list_says_so_with_404(client, make_catalog):
    make_catalog(app_doc("alpha"), app_doc("hidden", published=False))
    for slug in ("nothing-here", "hidden"):
        response = client.get(f"/signup?app={slug}")
        assert response.status_code == 404
        assert f"No app named “{slug}”" in response.content.decode()


@pytest.mark.parametrize("app", ["%00", "a%00", "A", "a" * 65, "%ED%A0%80", "a--b"])
def test_signup_for_what_cannot_be_a_slug_is_a_404(client, app):
    response = client.get(f"/signup?app={app}")
    assert response.status_code == 404
    assert "No app named" in response.content.decode()


def test_signup_without_an_app_says_how_to_get_an_account(client):
    response = client.get("/signup")
    assert response.status_code == 200
    assert "an administrator of this Flowgate makes accounts" in response.content.decode()


def test_a_doc_is_served_as_plain_text_and_nothing_else_of_the_repository_is(client):
    response = client.get("/docs/webhooks.md")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode().startswith("#")
    for name in ("README.md", "..%2FREADME.md", "SECRET.md", "webhooks.txt"):
        assert client.get(f"/docs/{name}").status_code == 404, name


def test_the_feeds_root_lists_its_routes(client, three_apps):
    build_bulk()
    response = client.get("/catalog/v1/")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    listed = json.loads(response.content)
    assert listed["openapi"] == "http://testserver/catalog/v1/openapi.json"
    for route in listed["routes"]:
        url = route["url"].replace("{slug}", "alpha")
        assert client.get(url).status_code == 200, url
    assert {route["path"] for route in listed["routes"]} >= {"/catalog/v1/apps", "/catalog/v1/bulk"}


def test_the_feeds_root_answers_other_methods_405_as_every_feed_route(client):
    response = client.post("/catalog/v1/")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
