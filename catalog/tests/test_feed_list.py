"""GET /catalog/v1/apps: the list envelope, caching headers and conditional requests."""

import gzip
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.entries import SUMMARY_FIELDS
from catalog.feed import build_feed
from catalog.models import App, FeedDocument
from conftest import app_doc

URL = "/catalog/v1/apps"
SUMMARY_KEYS = set(SUMMARY_FIELDS) - {"retired_at"}


def test_it_lists_every_connectable_app_in_popularity_order(client, three_apps):
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert set(body) == {"generated_at", "count", "apps"}
    assert body["count"] == len(body["apps"]) == 3
    assert [a["slug"] for a in body["apps"]] == ["alpha", "beta", "gamma"]
    assert [a["sort_order"] for a in body["apps"]] == [1, 2, 3]
    assert body["generated_at"].endswith("Z")


def test_entries_carry_exactly_the_summary_fields(client, three_apps):
    for entry in json.loads(client.get(URL).content)["apps"]:
        assert set(entry) == SUMMARY_KEYS


def test_entry_values_follow_the_spec(client, three_apps, settings):
    alpha, _, gamma = json.loads(client.get(URL).content)["apps"]
    assert alpha["logo_url"] == f"{settings.BASE_URL}/catalog/v1/apps/alpha/logo"
    assert alpha["connect_url"] == f"{settings.BASE_URL}/signup?app=alpha"
    assert alpha["etag"].startswith('"') and alpha["etag"].endswith('"')
    assert alpha["retired"] is False
    assert (alpha["trigger_count"], alpha["action_count"]) == (1, 1)
    assert alpha["last_op_modified"] is not None
    assert gamma["tier"] == "D"
    assert gamma["last_op_modified"] is None
    assert (gamma["trigger_count"], gamma["action_count"]) == (0, 0)


def test_it_sends_the_cache_headers_of_the_spec(client, three_apps):
    response = client.get(URL)
    assert response["Cache-Control"] == "public, max-age=300, stale-while-revalidate=3600"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["ETag"] == FeedDocument.objects.get(key="list").etag
    assert "Accept-Encoding" in response["Vary"]


@pytest.mark.parametrize(
    "header",
    ["{etag}", "W/{etag}", '"other", {etag}', "*"],
    ids=["exact", "weak", "in-a-list", "star"],
)
def test_it_answers_304_when_if_none_match_matches(client, three_apps, header):
    etag = client.get(URL)["ETag"]
    response = client.get(URL, HTTP_IF_NONE_MATCH=header.format(etag=etag))
    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Cache-Control"] == "public, max-age=300, stale-while-revalidate=3600"


def test_it_answers_200_when_if_none_match_is_stale(client, three_apps):
    response = client.get(URL, HTTP_IF_NONE_MATCH='"not-the-current-one"')
    assert response.status_code == 200


def test_head_sends_the_headers_without_a_body(client, three_apps):
    get = client.get(URL)
    head = client.head(URL)
    assert head.status_code == 200
    assert head.content == b""
    assert head["ETag"] == get["ETag"]
    assert int(head["Content-Length"]) == len(get.content)


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_other_methods_get_405_with_allow(client, three_apps, method):
    response = getattr(client, method)(URL)
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert response.content == b"method not allowed"
    assert response["Access-Control-Allow-Origin"] == "*"


def test_it_serves_gzip_only_to_clients_that_accept_it(client, three_apps):
    plain = client.get(URL)
    zipped = client.get(URL, HTTP_ACCEPT_ENCODING="br, gzip;q=0.8")
    refused = client.get(URL, HTTP_ACCEPT_ENCODING="gzip;q=0, identity")
    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content
    assert zipped["ETag"] != plain["ETag"]
    assert "Content-Encoding" not in refused


def test_unchanged_catalog_keeps_the_body_etag_and_generated_at(client, three_apps):
    first = client.get(URL)
    assert build_feed().changed is False
    second = client.get(URL)
    assert second.content == first.content
    assert second["ETag"] == first["ETag"]


def test_an_edit_changes_the_etag_and_generated_at(client, three_apps):
    first = client.get(URL)
    App.objects.filter(slug="beta").update(name="Beta Renamed")
    assert build_feed().changed is True
    second = client.get(URL)
    assert second["ETag"] != first["ETag"]
    assert json.loads(second.content)["apps"][1]["name"] == "Beta Renamed"


def test_a_catalog_put_back_as_it_was_gets_a_new_list_etag_for_its_new_body(client, three_apps):
    first, original = client.get(URL), App.objects.get(slug="beta").name
    App.objects.filter(slug="beta").update(name="Beta Renamed")
    build_feed(now=timezone.now() + timedelta(minutes=1))
    App.objects.filter(slug="beta").update(name=original)
    assert build_feed(now=timezone.now() + timedelta(minutes=2)).changed is True
    again = client.get(URL)
    assert json.loads(again.content)["apps"] == json.loads(first.content)["apps"]
    assert json.loads(again.content)["generated_at"] != json.loads(first.content)["generated_at"]
    assert again["ETag"] != first["ETag"]  # one strong validator, one body (RFC 9110 8.8.1)


NO_APP_PUBLISHED = {"error": "the catalog feed is temporarily unavailable: no app is published yet"}


def test_a_new_install_with_no_app_answers_503_saying_no_app_is_published_yet(client, db, caplog):
    assert build_feed().changed is False
    for url in (URL, f"{URL}/alpha", f"{URL}/alpha/logo", "/catalog/v1/bulk"):
        response = client.get(url)
        assert response.status_code == 503, url
        assert json.loads(response.content) == NO_APP_PUBLISHED
        assert response["Retry-After"] == "300"
        assert response["Access-Control-Allow-Origin"] == "*"
    assert "catalog feed: no app is published yet, so the feed answers 503 until one is" in caplog.text
    assert "manage.py import_catalog FILE, or manage.py load_demo" in caplog.text
    assert "ERROR" not in caplog.text and "keeping the last good feed" not in caplog.text


def test_apps_published_before_their_first_build_get_the_plain_503(client, make_catalog):
    make_catalog(app_doc("alpha"), build=False)
    response = client.get(URL)
    assert response.status_code == 503
    assert json.loads(response.content) == {"error": "the catalog feed is temporarily unavailable"}
    assert response["Retry-After"] == "60"


def test_the_first_build_ends_the_no_app_answer(client, make_catalog):
    assert client.get(URL).status_code == 503
    make_catalog(app_doc("alpha"))
    assert client.get(URL).status_code == 200


def test_it_never_answers_200_with_an_empty_list(client, make_catalog):
    make_catalog(app_doc("only", published=False))
    response = client.get(URL)
    assert response.status_code == 503


def test_an_emptied_catalog_keeps_serving_the_last_good_list(client, three_apps):
    before = client.get(URL)
    App.objects.update(published=False)
    assert build_feed().changed is False
    after = client.get(URL)
    assert after.status_code == 200
    assert after.content == before.content
