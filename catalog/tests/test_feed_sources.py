"""A rebuild of an unchanged catalog stops at the digest of its rows; any change to those rows still rebuilds."""

import json
import tracemalloc
from datetime import timedelta

from django.utils import timezone

from catalog import sources
from catalog.feed import build_feed
from catalog.models import App, FeedDocument, Operation
from catalog.sources import feed_sources
from conftest import app_doc

URL = "/catalog/v1/apps"


def peak_bytes_of(build) -> int:
    tracemalloc.start()
    try:
        build()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def listed(client) -> dict:
    response = client.get(URL)
    assert response.status_code == 200, response.content
    return {app["slug"]: app for app in json.loads(response.content)["apps"]}


def test_an_unchanged_catalog_is_told_without_holding_it_in_memory(make_catalog, monkeypatch):
    monkeypatch.setattr(sources, "CHUNK_ROWS", 50)  # a catalog of 300 apps stands for one of thousands
    long_text = "An app with a description of some length. " * 20
    make_catalog(*(app_doc(f"app-{n}", popularity=n, description=long_text) for n in range(300)))
    FeedDocument.objects.filter(key="list").update(sources="")  # the build must read the entries to tell
    reading_entries = peak_bytes_of(build_feed)
    by_digest = peak_bytes_of(build_feed)
    assert by_digest * 5 < reading_entries


def test_the_digest_is_stored_with_the_list_and_a_second_build_stops_at_it(three_apps):
    stored = FeedDocument.objects.get(key="list")
    assert stored.sources == feed_sources(timezone.now()).digest
    build = build_feed()
    assert (build.changed, build.count) == (False, 3)
    assert FeedDocument.objects.get(key="list").etag == stored.etag


def test_a_popularity_set_by_a_queryset_update_reranks_the_feed(client, three_apps):
    App.objects.filter(slug="gamma").update(popularity=1000)  # updated_at stays as it was
    assert build_feed().changed is True
    apps = listed(client)
    assert (apps["gamma"]["sort_order"], apps["gamma"]["tier"]) == (1, "A")
    assert App.objects.get(slug="gamma").sort_order == 1


def test_a_popularity_change_that_keeps_every_rank_keeps_the_list_and_records_the_new_digest(client, three_apps):
    before = client.get(URL)
    App.objects.filter(slug="alpha").update(popularity=301)
    assert build_feed().changed is False
    assert client.get(URL)["ETag"] == before["ETag"]
    assert FeedDocument.objects.get(key="list").sources == feed_sources(timezone.now()).digest


def test_an_operation_edited_by_a_queryset_update_reaches_its_detail(client, three_apps):
    Operation.objects.filter(app__slug="alpha", kind="action").update(description="Now does more.")
    assert build_feed().changed is True
    detail = json.loads(client.get(f"{URL}/alpha").content)
    assert [action["description"] for action in detail["actions"]] == ["Now does more."]


def test_an_operation_unlisted_by_a_queryset_update_leaves_the_counts(client, three_apps):
    Operation.objects.filter(app__slug="alpha", kind="trigger").update(listed=False)
    assert build_feed().changed is True
    assert listed(client)["alpha"]["trigger_count"] == 0


def test_a_new_base_url_rebuilds_every_link(three_apps, settings):
    settings.BASE_URL = "https://feed.example.net"  # the hosts follow it, so the stored body is read here
    assert build_feed().changed is True
    alpha = json.loads(FeedDocument.objects.get(key="list").body)["apps"][0]
    assert alpha["logo_url"] == "https://feed.example.net/catalog/v1/apps/alpha/logo"


def test_an_app_leaving_the_retirement_window_leaves_the_feed(client, three_apps, settings):
    retired = timezone.now() - timedelta(days=settings.CATALOG_RETIREMENT_DAYS - 1)
    App.objects.filter(slug="beta").update(retired_at=retired)
    assert build_feed().changed is True
    assert listed(client)["beta"]["retired"] is True
    assert build_feed(now=timezone.now() + timedelta(days=2)).changed is True
    assert "beta" not in listed(client)
