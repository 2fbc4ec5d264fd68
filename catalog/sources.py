"""What the feed is built from, as one digest: a rebuild of an unchanged catalog stops at it."""

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from catalog.entries import APP_COLUMNS, OPERATION_COLUMNS
from catalog.models import Operation
from catalog.selectors import connectable_apps

# Rows read at a time: the digest's memory stays at one chunk, whatever the catalog's size.
CHUNK_ROWS = 500


@dataclass(frozen=True)
class Sources:
    digest: str
    count: int


def feed_sources(now: datetime) -> Sources:
    """The digest of every value the feed's bodies are computed from, and how many apps it lists.

    Beat rebuilds the feed every 15 minutes and the catalog has almost always
    not changed. Building the entries to find that out held the whole catalog
    in memory at once (some 8 MB of objects for 2,000 apps), which each worker
    process then kept as its high-water mark. The digest streams the same rows
    a chunk at a time instead. It hashes the rows themselves rather than
    trusting updated_at, since a queryset update (popularity, a rename by a
    script) does not touch updated_at. Equal digests mean equal bodies; unequal
    ones only mean the build must look (a popularity change may leave every
    rank as it was).
    """
    digest = hashlib.sha256(settings.BASE_URL.encode())
    apps = connectable_apps(now)
    count = 0
    for row in apps.order_by("id").values_list(*APP_COLUMNS).iterator(chunk_size=CHUNK_ROWS):
        digest.update(repr(row).encode())
        count += 1
    digest.update(b"\0operations")
    operations = (
        Operation.objects.filter(app_id__in=apps.values("id"), listed=True)
        .order_by("app_id", "kind", "position", "key")
        .values_list(*OPERATION_COLUMNS)
    )
    for row in operations.iterator(chunk_size=CHUNK_ROWS):
        digest.update(repr(row).encode())
    return Sources(digest=digest.hexdigest(), count=count)
