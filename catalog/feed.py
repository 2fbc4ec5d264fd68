"""Materializing the feed (DESIGN.md contract 2): list and detail bodies rebuilt when the catalog changes."""

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from catalog import documents, sources
from catalog.entries import dumps, iter_entries, quoted_hash, rfc3339, summary_of
from catalog.models import App, FeedDocument

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedBuild:
    changed: bool
    count: int
    details_written: int = 0
    details_removed: int = 0


def build_feed(*, now: datetime | None = None) -> FeedBuild:
    """Rebuild the stored list and detail bodies from the catalog.

    A list whose content has not changed keeps its stored body, so its ETag
    and generated_at stay put; when the rows it was built from have not
    changed either (catalog.sources), the build stops before reading the
    catalog into memory. A catalog with no connectable app never
    replaces the last good list: the feed keeps serving it rather than
    answer 200 with an empty list.
    """
    now = now or timezone.now()
    with transaction.atomic():
        documents.lock_builds()
        stored = (
            FeedDocument.objects.filter(key=documents.LIST_KEY).values_list("etag", "generated_at", "sources").first()
        )
        read = sources.feed_sources(now)
        if stored and stored[2] == read.digest:
            return FeedBuild(changed=False, count=read.count)
        built = sources.Digest()  # of the rows the entries are built from, which an edit may have changed meanwhile
        entries = list(iter_entries(now, built))
        _store_ranks(entries)
        if not entries and stored is None:
            logger.warning(
                "catalog feed: no app is published yet, so the feed answers 503 until one is "
                "(manage.py import_catalog FILE, or manage.py load_demo for the demo catalog)"
            )
            return FeedBuild(changed=False, count=0)
        if not entries:
            logger.error("catalog feed build found no connectable app; keeping the last good feed")
            # Its ranks were cleared from the apps above: apps back as they were must not stop at the digest.
            FeedDocument.objects.filter(key=documents.LIST_KEY).update(sources="")
            return FeedBuild(changed=False, count=0)
        content = [entry["etag"].encode() for entry in entries]
        if stored and stored[0] == _list_etag(content, stored[1]):
            FeedDocument.objects.filter(key=documents.LIST_KEY).update(sources=built.hexdigest())
            return FeedBuild(changed=False, count=len(entries))
        list_etag = _list_etag(content, now)
        written, removed = _store_details(entries, now)
        body = dumps({"generated_at": rfc3339(now), "count": len(entries), "apps": [summary_of(e) for e in entries]})
        slugs = [entry["slug"] for entry in entries]
        documents.save_documents(
            [documents.make_document(documents.LIST_KEY, body, list_etag, now, slugs, sources=built.hexdigest())]
        )
    logger.info("catalog feed rebuilt: %d apps, %d details written, %d removed", len(entries), written, removed)
    return FeedBuild(changed=True, count=len(entries), details_written=written, details_removed=removed)


def _list_etag(content: list[bytes], generated_at: datetime) -> str:
    """The list's ETag: its entries' etags and its generated_at, every byte its body depends on. A list whose
    entries went back to an earlier version's has another generated_at, so another ETag: a process that kept the
    earlier body for that version would otherwise serve it, one strong validator for two bodies."""
    return quoted_hash(*content, rfc3339(generated_at).encode())


def _store_details(entries: list[dict], now: datetime) -> tuple[int, int]:
    previous = documents.stored_detail_etags()
    changed = [
        documents.make_document(documents.detail_key(e["slug"]), dumps(e), e["etag"], now)
        for e in entries
        if previous.get(documents.detail_key(e["slug"])) != e["etag"]
    ]
    documents.save_documents(changed)
    gone = set(previous) - {documents.detail_key(e["slug"]) for e in entries}
    FeedDocument.objects.filter(key__in=gone).delete()
    return len(changed), len(gone)


def _store_ranks(entries: list[dict]) -> None:
    """Copy tier and sort_order onto the apps, for staff filters in admin; apps out of the feed get none."""
    ranks = {e["slug"]: (e["tier"], e["sort_order"]) for e in entries}
    stale = []
    for app in App.objects.only("id", "slug", "tier", "sort_order"):
        tier, sort_order = ranks.get(app.slug, ("", None))
        if (app.tier, app.sort_order) != (tier, sort_order):
            app.tier, app.sort_order = tier, sort_order
            stale.append(app)
    App.objects.bulk_update(stale, ["tier", "sort_order"], batch_size=1000)


def schedule_feed_rebuild() -> None:
    """Rebuild the feed in a worker once the current transaction commits."""
    from catalog.tasks import rebuild_feed  # tasks import this module

    transaction.on_commit(rebuild_feed.delay)
