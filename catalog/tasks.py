"""Celery tasks of the catalog: thin wrappers around the build functions."""

from celery import shared_task

from catalog import bulk, feed, retirement


@shared_task(name="catalog.rebuild_feed")
def rebuild_feed() -> int:
    """Rebuild the list and detail bodies; a no-op when nothing the feed shows changed."""
    return feed.build_feed().count


@shared_task(name="catalog.build_bulk")
def build_bulk() -> int:
    """Build the daily bulk artifact (04:00 UTC by beat)."""
    return bulk.build_bulk().count


@shared_task(name="catalog.expire_retired_apps")
def expire_retired_apps() -> list[str]:
    """Drop apps whose retirement window has passed from the feed."""
    return retirement.expire_retired_apps()
