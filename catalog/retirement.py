"""Retiring apps: withdrawn apps stay in the feed for the retirement window, then leave it."""

from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from catalog import documents, feed
from catalog.models import App, FeedDocument
from catalog.selectors import connectable_apps


def retire_apps(apps: QuerySet[App], *, now: datetime | None = None) -> int:
    """Mark apps withdrawn now; already retired apps keep their original time. Schedules a feed rebuild."""
    now = now or timezone.now()
    count = apps.filter(retired_at__isnull=True).update(retired_at=now, updated_at=now)
    feed.schedule_feed_rebuild()
    return count


def unretire_apps(apps: QuerySet[App]) -> int:
    """Withdraw the retirement of apps (a mistaken retire). Schedules a feed rebuild."""
    count = apps.filter(retired_at__isnull=False).update(retired_at=None, updated_at=timezone.now())
    feed.schedule_feed_rebuild()
    return count


def expire_retired_apps(*, now: datetime | None = None) -> list[str]:
    """Rebuild the feed when some listed app has passed its retirement window; returns the slugs dropped."""
    listed = FeedDocument.objects.filter(key=documents.LIST_KEY).values_list("slugs", flat=True).first() or []
    still = set(connectable_apps(now).filter(slug__in=listed).values_list("slug", flat=True))
    dropped = [slug for slug in listed if slug not in still]
    if dropped:
        feed.build_feed(now=now)
    return dropped
