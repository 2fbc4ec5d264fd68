"""GET /catalog/v1/bulk: the daily artifact, gzip negotiation, and its 503s."""

import gzip
import json
from datetime import UTC, datetime

from celery.schedules import crontab
from django.conf import settings

from catalog.bulk import build_bulk
from catalog.entries import DETAIL_FIELDS
from catalog.feed import build_feed
from catalog.models import App
from conftest import app_doc

URL = "/catalog/v1/bulk"


def test_it_answers_503_before_the_first_build(client, three_apps):
    response = client.get(URL)
    assert response.status_code == 503
    assert response["Retry-After"] == "300"
    assert json.loads(response.content) == {"error": "the catalog feed is temporarily unavailable"}
    assert response["Access-Control-Allow-Origin"] == "*"


def test_it_serves_every_app_with_operations(client, three_apps):
    build_bulk()
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Cache-Control"] == "public, max-age=3600"
    assert "Content-Encoding" not in response
    body = json.loads(response.content)
    assert body["count"] == len(body["apps"]) == 3
    for entry in body["apps"]:
        assert set(entry) == set(DETAIL_FIELDS) - {"retired_at"}
    detail = json.loads(client.get("/catalog/v1/apps/alpha").content)
    assert body["apps"][0] == detail


def test_it_is_gzip_compressed_only_when_accepted(client, three_apps):
    build_bulk()
    plain = client.get(URL)
    zipped = client.get(URL, HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"] and "Accept-Encoding" in plain["Vary"]
    assert gzip.decompress(zipped.content) == plain.content
    assert client.get(URL, HTTP_IF_NONE_MATCH=zipped["ETag"], HTTP_ACCEPT_ENCODING="gzip").status_code == 304
    assert client.get(URL, HTTP_IF_NONE_MATCH=plain["ETag"]).status_code == 304


def test_generated_at_is_when_the_artifact_was_built(client, three_apps):
    moment = datetime(2026, 11, 20, 4, 0, 0, tzinfo=UTC)
    build_bulk(now=moment)
    assert json.loads(client.get(URL).content)["generated_at"] == "2026-11-20T04:00:00Z"


def test_it_answers_503_when_it_lists_an_app_the_feed_dropped(client, three_apps):
    build_bulk()
    App.objects.filter(slug="beta").update(published=False)
    build_feed()
    response = client.get(URL)
    assert response.status_code == 503
    assert response["Retry-After"] == "300"
    build_bulk()
    assert client.get(URL).status_code == 200


def test_an_app_added_since_the_build_does_not_break_it(client, three_apps, make_catalog):
    build_bulk()
    make_catalog(app_doc("newcomer"))
    assert client.get(URL).status_code == 200


def test_beat_rebuilds_it_daily_at_0400_utc():
    entry = settings.CELERY_BEAT_SCHEDULE["catalog-build-bulk"]
    assert entry["task"] == "catalog.build_bulk"
    assert entry["schedule"] == crontab(hour=4, minute=0)
    assert settings.CELERY_TIMEZONE == "UTC"
    schedule = entry["schedule"]
    schedule.nowfun = lambda: datetime(2026, 11, 21, 3, 59, 0, tzinfo=UTC)
    due, wait = schedule.is_due(datetime(2026, 11, 20, 4, 0, 0, tzinfo=UTC))
    assert (due, round(wait)) == (False, 60)
    schedule.nowfun = lambda: datetime(2026, 11, 21, 4, 0, 1, tzinfo=UTC)
    assert schedule.is_due(datetime(2026, 11, 20, 4, 0, 0, tzinfo=UTC))[0] is True


def test_the_build_command_and_task_store_the_artifact(client, three_apps):
    from django.core.management import call_command

    from catalog.tasks import build_bulk as task

    assert task.name == "catalog.build_bulk"
    call_command("build_bulk")
    assert client.get(URL).status_code == 200
