"""The materialized feed: stored bodies, served from memory, the last good body when the catalog is unreadable."""

import time
from contextlib import contextmanager

from django.db import DatabaseError, connection

from catalog.feed import build_feed
from catalog.models import App, FeedDocument
from edge import process_cache


@contextmanager
def bodies_unreadable():
    """Every statement that reads stored bodies fails, as a passing database fault would; the version check still
    reads (Django's database instrumentation, on this thread's connection, which the test client's requests use)."""

    def failing(execute, sql, params, many, context):
        if '"catalog_feeddocument"."body"' in sql:
            raise DatabaseError("the catalog database is down")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(failing):
        yield


def test_bodies_are_stored_with_their_etags(three_apps):
    keys = set(FeedDocument.objects.values_list("key", flat=True))
    assert keys == {"list", "app:alpha", "app:beta", "app:gamma"}
    detail = FeedDocument.objects.get(key="app:alpha")
    assert detail.etag in bytes(detail.body).decode().replace('\\"', '"')


def test_only_changed_details_are_rewritten(three_apps):
    App.objects.filter(slug="beta").update(name="B2")
    build = build_feed()
    assert (build.changed, build.details_written, build.details_removed) == (True, 1, 0)


def test_it_serves_the_last_good_body_when_the_catalog_cannot_be_read(client, three_apps):
    good = client.get("/catalog/v1/apps")
    detail = client.get("/catalog/v1/apps/alpha")
    App.objects.filter(slug="alpha").update(name="Newer")
    build_feed()  # a newer build exists, but reading it fails
    with bodies_unreadable():
        assert client.get("/catalog/v1/apps").content == good.content
        assert client.get("/catalog/v1/apps/alpha").content == detail.content


def test_it_answers_503_when_nothing_good_was_ever_read(client, three_apps):
    with bodies_unreadable():
        response = client.get("/catalog/v1/apps")
    assert response.status_code == 503
    assert response["Retry-After"] == "60"


def test_a_failed_version_check_keeps_serving_from_memory(client, three_apps, monkeypatch):
    good = client.get("/catalog/v1/apps")

    class Broken:
        def filter(self, *args, **kwargs):
            raise DatabaseError("down")

    monkeypatch.setattr(FeedDocument, "objects", Broken())
    response = client.get("/catalog/v1/apps")
    assert response.status_code == 200
    assert response.content == good.content


def test_memory_follows_a_new_build(client, three_apps, settings, monkeypatch):
    settings.FEED_VERSION_CHECK_SECONDS = 3600
    client.get("/catalog/v1/apps")
    App.objects.filter(slug="alpha").update(name="Later")
    build_feed()
    assert b"Later" not in client.get("/catalog/v1/apps").content  # still within the check interval
    later = lambda: time.monotonic() + 3600  # noqa: E731  (the interval has passed)
    monkeypatch.setattr(process_cache.registered("catalog.feed_version"), "clock", later)
    assert b"Later" in client.get("/catalog/v1/apps").content


def test_a_scheduled_rebuild_runs_once_the_transaction_commits(three_apps, django_capture_on_commit_callbacks):
    from catalog import feed
    from config.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    try:
        App.objects.filter(slug="gamma").update(name="Gamma Prime")
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            feed.schedule_feed_rebuild()
        assert len(callbacks) == 1
    finally:
        celery_app.conf.task_always_eager = False
    assert b"Gamma Prime" in bytes(FeedDocument.objects.get(key="app:gamma").body)
