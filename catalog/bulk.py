"""The bulk artifact: every connectable app with its operations, built daily and stored with a gzip copy."""

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from catalog import documents
from catalog.entries import dumps, iter_entries, quoted_hash, rfc3339

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BulkBuild:
    built: bool
    count: int
    size: int = 0


def build_bulk(*, now: datetime | None = None) -> BulkBuild:
    """Build and store the bulk artifact; an empty catalog keeps the previous artifact.

    Entries are encoded one at a time and joined once, so peak memory is
    about twice the body rather than the whole catalog as Python objects.
    """
    now = now or timezone.now()
    pieces, slugs = [], []
    for entry in iter_entries(now):
        pieces.append(dumps(entry))
        slugs.append(entry["slug"])
    if not pieces:
        logger.error("bulk build found no connectable app; keeping the previous artifact")
        return BulkBuild(built=False, count=0)
    head = b'{"generated_at":"%s","count":%d,"apps":[' % (rfc3339(now).encode(), len(pieces))
    body = b"".join((head, b",".join(pieces), b"]}"))
    del pieces
    document = documents.make_document(documents.BULK_KEY, body, quoted_hash(body), now, slugs)
    with transaction.atomic():
        documents.lock_builds()
        documents.save_documents([document])
    logger.info("bulk artifact built: %d apps, %d bytes (%d gzip)", len(slugs), len(body), len(document.gzip_body))
    return BulkBuild(built=True, count=len(slugs), size=len(body))
