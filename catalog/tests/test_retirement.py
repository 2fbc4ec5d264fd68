"""Retirement: a withdrawn app stays in the feed for the window, then a beat job drops it."""

import json
from datetime import timedelta

from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from catalog.models import App
from catalog.retirement import expire_retired_apps, retire_apps


def test_a_retired_app_stays_in_the_feed(client, three_apps):
    retire_apps(App.objects.filter(slug="beta"))
    from catalog.feed import build_feed

    build_feed()
    entry = json.loads(client.get("/catalog/v1/apps/beta").content)
    assert entry["retired"] is True and entry["retired_at"]


def test_retiring_twice_keeps_the_first_time(three_apps):
    first = timezone.now() - timedelta(days=3)
    retire_apps(App.objects.filter(slug="beta"), now=first)
    retire_apps(App.objects.all())
    assert App.objects.get(slug="beta").retired_at == first


def test_after_the_window_the_app_leaves_and_its_urls_404(client, three_apps):
    past_the_window = timezone.now() - timedelta(days=settings.CATALOG_RETIREMENT_DAYS + 1)
    App.objects.filter(slug="beta").update(retired_at=past_the_window)
    assert client.get("/catalog/v1/apps/beta").status_code == 200  # until the job runs
    assert expire_retired_apps() == ["beta"]
    assert client.get("/catalog/v1/apps/beta").status_code == 404
    assert client.get("/catalog/v1/apps/beta/logo").status_code == 404
    slugs = [a["slug"] for a in json.loads(client.get("/catalog/v1/apps").content)["apps"]]
    assert slugs == ["alpha", "gamma"]
    assert expire_retired_apps() == []


def test_the_job_drops_apps_exactly_at_the_window(three_apps):
    now = timezone.now()
    App.objects.filter(slug="beta").update(retired_at=now - timedelta(days=180))
    assert expire_retired_apps(now=now - timedelta(seconds=1)) == []
    assert expire_retired_apps(now=now) == ["beta"]


def test_beat_runs_the_job_hourly_and_the_command_runs_it_now(three_apps, capsys):
    entry = settings.CELERY_BEAT_SCHEDULE["catalog-expire-retired"]
    assert entry["task"] == "catalog.expire_retired_apps"
    App.objects.filter(slug="gamma").update(retired_at=timezone.now() - timedelta(days=365))
    call_command("expire_retired_apps")
    assert "dropped 1 apps: gamma" in capsys.readouterr().out
