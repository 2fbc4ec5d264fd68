"""GET /catalog/v1/apps/{slug}: one entry with its triggers and actions, and every 404."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.entries import DETAIL_FIELDS
from catalog.models import App
from conftest import app_doc

DETAIL_KEYS = set(DETAIL_FIELDS) - {"retired_at"}


def test_it_returns_the_entry_with_operations(client, three_apps):
    response = client.get("/catalog/v1/apps/alpha")
    assert response.status_code == 200
    entry = json.loads(response.content)
    assert set(entry) == DETAIL_KEYS
    assert entry["triggers"] == [{"name": "New Thing", "description": "When a thing appears."}]
    assert entry["actions"] == [{"name": "Create Thing", "description": "Makes a thing."}]
    assert response["ETag"] == entry["etag"]
    assert response["Cache-Control"] == "public, max-age=300, stale-while-revalidate=3600"
    assert response["Access-Control-Allow-Origin"] == "*"


def test_detail_matches_the_list_summary(client, three_apps):
    summary = json.loads(client.get("/catalog/v1/apps").content)["apps"][1]
    detail = json.loads(client.get("/catalog/v1/apps/beta").content)
    assert {k: v for k, v in detail.items() if k not in ("triggers", "actions")} == summary


def test_it_answers_304_for_the_entry_etag(client, three_apps):
    etag = json.loads(client.get("/catalog/v1/apps/alpha").content)["etag"]
    response = client.get("/catalog/v1/apps/alpha", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert response.content == b""


@pytest.mark.parametrize(
    "slug", ["nope", "Alpha", "ALPHA", "alpha_", "al--pha", "-alpha", "alpha%20", "a" * 65, "alph%C3%A4"]
)
def test_unknown_and_invalid_slugs_get_404_with_no_body(client, three_apps, slug):
    response = client.get(f"/catalog/v1/apps/{slug}")
    assert response.status_code == 404
    assert response.content == b""
    assert response["Access-Control-Allow-Origin"] == "*"


def test_unpublished_apps_are_not_in_the_feed(client, make_catalog):
    make_catalog(app_doc("shown"), app_doc("draft", published=False))
    assert client.get("/catalog/v1/apps/draft").status_code == 404
    assert [a["slug"] for a in json.loads(client.get("/catalog/v1/apps").content)["apps"]] == ["shown"]


def test_a_retired_app_stays_with_retired_at(client, make_catalog):
    make_catalog(app_doc("kept"), app_doc("old", retired_at=(timezone.now() - timedelta(days=10)).isoformat()))
    entry = json.loads(client.get("/catalog/v1/apps/old").content)
    assert entry["retired"] is True
    assert entry["retired_at"].endswith("Z")
    assert set(entry) == DETAIL_KEYS | {"retired_at"}


def test_paths_beside_the_routes_get_404(client, three_apps):
    # /catalog/v1/ itself lists the routes (tests/test_pages.py).
    for path in ("/catalog/v1/apps/", "/catalog/v1/apps/alpha/", "/catalog/v1/apps/alpha/x", "/catalog/v1/nope"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.content == b""


def test_an_app_deleted_after_the_build_leaves_on_the_next_build(client, three_apps):
    from catalog.feed import build_feed

    App.objects.filter(slug="beta").delete()
    build_feed()
    assert client.get("/catalog/v1/apps/beta").status_code == 404
    assert client.get("/catalog/v1/apps/beta/logo").status_code == 404


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_the_published_etag_answers_304_whatever_encoding_the_client_accepts(client, three_apps, encoding):
    etag = json.loads(client.get("/catalog/v1/apps/alpha").content)["etag"]
    full = client.get("/catalog/v1/apps/alpha", HTTP_ACCEPT_ENCODING=encoding)
    response = client.get("/catalog/v1/apps/alpha", HTTP_IF_NONE_MATCH=etag, HTTP_ACCEPT_ENCODING=encoding)
    assert (response.status_code, response.content) == (304, b"")
    assert response["ETag"] == full["ETag"]
    assert "Content-Length" not in response  # as nginx sends a 304: a client reads no body length into it


def test_if_unmodified_since_is_ignored_and_a_failed_if_match_gets_412(client, three_apps):
    long_ago = "Wed, 25 Nov 1990 00:00:00 GMT"  # RFC 9110 13.1.4: the feed has no modification date to test
    assert client.get("/catalog/v1/apps/alpha", HTTP_IF_UNMODIFIED_SINCE=long_ago).status_code == 200
    assert client.get("/catalog/v1/apps/alpha", HTTP_IF_MATCH='"another"').status_code == 412


def test_a_chunked_request_gets_the_feeds_answer_not_411(client, three_apps):
    assert client.get("/catalog/v1/apps/alpha", HTTP_TRANSFER_ENCODING="chunked").status_code == 200
    refused = client.post("/catalog/v1/apps/alpha", HTTP_TRANSFER_ENCODING="chunked")
    assert (refused.status_code, refused["Allow"]) == (405, "GET, HEAD")


@pytest.mark.parametrize("path", ["/catalog/v1/apps", "/catalog/v1/apps/alpha", "/catalog/v1/openapi.json"])
def test_a_304_from_the_web_process_carries_no_content_length(web_client, three_apps, path):
    etag = web_client.get(path)["ETag"]
    response = web_client.get(path, HTTP_IF_NONE_MATCH=etag)
    assert (response.status_code, response.content) == (304, b"")
    assert "Content-Length" not in response and response["ETag"] == etag
