"""connectable_apps(): the one visibility rule of the app picker and the feed."""

from datetime import timedelta

from django.utils import timezone

from catalog.models import App
from catalog.selectors import connectable_apps


def make(slug, **fields):
    return App.objects.create(slug=slug, name=slug, auth_type="none", app_domain="x.example", **fields)


def test_published_and_recently_retired_apps_are_connectable(db, settings):
    now = timezone.now()
    make("live")
    make("draft", published=False)
    make("fresh-retiree", retired_at=now - timedelta(days=179))
    make("gone", retired_at=now - timedelta(days=181))
    make("draft-retiree", published=False, retired_at=now)
    assert set(connectable_apps(now).values_list("slug", flat=True)) == {"live", "fresh-retiree"}


def test_the_window_is_a_setting(db, settings):
    settings.CATALOG_RETIREMENT_DAYS = 7
    now = timezone.now()
    make("week-old", retired_at=now - timedelta(days=8))
    assert not connectable_apps(now).exists()
