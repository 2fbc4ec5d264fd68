"""A rebuild of an unchanged catalog stops at the digest of its rows; any change to those rows still rebuilds."""

import json
import tracemalloc
from datetime import timedelta

from django.utils import timezone

from catalog import feed, popularity, sources
from catalog.feed import build_feed
from catalog.models import App, FeedDocument, Operation
from catalog.sources import feed_sources
from conftest import app_doc

URL = "/catalog/v1/apps"


def peak_bytes_of(build) -> int:
    """The peak of Python's allocations during build(), above what was allocated before it."""
    started = not tracemalloc.is_tracing()  # a run under -X tracemalloc keeps its own tracing
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        build()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
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


def test_the_digest_is_stored_with_the_list_and_a_second_build_stops_at_it(three_apps, monkeypatch):
    stored = FeedDocument.objects.get(key="list")
    assert stored.sources == feed_sources(timezone.now()).digest  # the build's rows hash as the streamed ones

    def never(*args):
        raise AssertionError("the unchanged catalog was read into memory")

    monkeypatch.setattr(feed, "iter_entries", never)
    build = build_feed()
    assert (build.changed, build.count) == (False, 3)
    assert FeedDocument.objects.get(key="list").etag == stored.etag


def test_an_edit_between_the_digest_and_the_build_is_read_again_next_time(client, three_apps, monkeypatch):
    original = App.objects.get(slug="beta").name
    App.objects.filter(slug="beta").update(name="Beta Renamed")
    streamed = sources.feed_sources

    def read_then_edit(now):
        read = streamed(now)
        App.objects.filter(slug="beta").update(name=original)  # another process's edit, committed meanwhile
        return read

    monkeypatch.setattr(sources, "feed_sources", read_then_edit)
    build_feed()
    monkeypatch.undo()
    assert listed(client)["beta"]["name"] == original
    App.objects.filter(slug="beta").update(name="Beta Renamed")  # the rows the first digest was read from
    assert build_feed().changed is True
    assert listed(client)["beta"]["name"] == "Beta Renamed"


def test_a_deploy_that_changes_the_feeds_code_rebuilds_it(client, three_apps, monkeypatch):
    monkeypatch.setattr(popularity, "TIER_A_SHARE", 0.7)  # the new code's tiers
    monkeypatch.setattr(sources, "code_digest", lambda: b"the new code")
    assert build_feed().changed is True
    assert listed(client)["beta"]["tier"] == "A"


def test_apps_unpublished_and_published_again_as_they_were_get_their_ranks_back(three_apps):
    App.objects.update(published=False)
    assert build_feed().changed is False  # the last good list is kept
    assert App.objects.filter(sort_order__isnull=False).count() == 0
    App.objects.update(published=True)
    build_feed()
    assert dict(App.objects.values_list("slug", "sort_order")) == {"alpha": 1, "beta": 2, "gamma": 3}


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


def test_a_deployment_without_the_feeds_sources_still_builds(three_apps, monkeypatch):
    monkeypatch.setattr(sources, "CODE_FILES", ("entries.py", "compiled-away.py"))
    sources.code_digest.cache_clear()
    try:
        assert build_feed().count == 3
    finally:
        sources.code_digest.cache_clear()
