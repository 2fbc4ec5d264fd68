"""Storing feed documents: keys, compression and the build lock."""

import gzip
from datetime import datetime

from django.db import connection

from catalog.models import FeedDocument

LIST_KEY = "list"
BULK_KEY = "bulk"
_DETAIL_PREFIX = "app:"
_BUILD_LOCK_ID = 0x666C6F77  # any constant shared by every build


def detail_key(slug: str) -> str:
    return _DETAIL_PREFIX + slug


def compress(body: bytes) -> bytes:
    # mtime=0: the same body always compresses to the same bytes.
    return gzip.compress(body, compresslevel=6, mtime=0)


def make_document(
    key: str, body: bytes, etag: str, generated_at: datetime, slugs=(), *, sources: str = ""
) -> FeedDocument:
    return FeedDocument(
        key=key,
        body=body,
        gzip_body=compress(body),
        etag=etag,
        generated_at=generated_at,
        slugs=list(slugs),
        sources=sources,
    )


def save_documents(documents: list[FeedDocument]) -> None:
    FeedDocument.objects.bulk_create(
        documents,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["body", "gzip_body", "etag", "generated_at", "slugs", "sources"],
    )


def stored_detail_etags() -> dict[str, str]:
    return dict(FeedDocument.objects.filter(key__startswith=_DETAIL_PREFIX).values_list("key", "etag"))


def lock_builds() -> None:
    """Serialize builds until the current transaction ends, so an older build never overwrites a newer one.

    PostgreSQL takes an advisory lock; SQLite transactions here begin
    IMMEDIATE, which already admits one writer at a time.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_BUILD_LOCK_ID])
