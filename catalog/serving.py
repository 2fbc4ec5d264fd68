"""Stored feed documents served from process memory, reloaded when a newer build is committed.

Each web process asks the database at most once every
FEED_VERSION_CHECK_SECONDS which list and bulk are current, and otherwise
answers from memory (process caches, edge/process_cache.py). When the
database cannot be read, the last good copy held in memory keeps being
served; without one the feed answers 503. A catalog that never had a
connectable app has no feed yet: its 503 says that no app is published.
"""

import logging
from collections.abc import Callable
from typing import NamedTuple

from django.conf import settings
from django.db import DatabaseError

from catalog import documents
from catalog.entries import quoted_hash
from catalog.exceptions import FeedUnavailable, NoAppPublished
from catalog.models import App, FeedDocument
from catalog.selectors import connectable_apps
from edge import process_cache

logger = logging.getLogger(__name__)

RETRY_SOON = 60  # the catalog could not be read: a passing fault
RETRY_LATER = 300  # the bulk artifact is missing or stale until the next build; no app is published yet


class Document(NamedTuple):
    body: bytes
    gzip_body: bytes
    etag: str
    slugs: frozenset


class Logo(NamedTuple):
    content: bytes
    content_type: str
    etag: str


# The current feed version (the list's and bulk's ETags), checked at most every FEED_VERSION_CHECK_SECONDS.
_version = process_cache.named("catalog.feed_version", max_size=1)
# Each document read, with the version it was read under: fresh while that version is current, and the last
# good copy after that. A few hundred apps each have a detail and a logo; the cap only bounds a damaged catalog.
_documents = process_cache.named("catalog.feed_documents", max_size=20_000)
_UNCHECKED = object()


def list_document() -> Document:
    document = _load(documents.LIST_KEY, lambda: _read_document(documents.LIST_KEY))
    if document is None:
        # Asked once per feed version: the first build, which a published app starts, changes the version.
        if _load("no app published", lambda: not connectable_apps().exists()):
            raise NoAppPublished(RETRY_LATER)
        raise FeedUnavailable(RETRY_SOON)
    return document


def detail_document(slug: str) -> Document | None:
    """The app's entry, or None when the app is not in the feed."""
    if slug not in list_document().slugs:
        return None
    key = documents.detail_key(slug)
    document = _load(key, lambda: _read_document(key))
    if document is None:  # list and details are written together; a gap means a damaged store
        raise FeedUnavailable(RETRY_SOON)
    return document


def bulk_document() -> Document:
    """The daily artifact; 503 before the first build and while it lists an app the feed has dropped."""
    listed = list_document().slugs
    document = _load(documents.BULK_KEY, lambda: _read_document(documents.BULK_KEY))
    if document is None or not document.slugs <= listed:
        raise FeedUnavailable(RETRY_LATER)
    return document


def logo(slug: str) -> Logo | None:
    """The app's icon, or None when the app is not in the feed or has none."""
    if slug not in list_document().slugs:
        return None
    return _load("logo:" + slug, lambda: _read_logo(slug))


def _read_document(key: str) -> Document | None:
    row = FeedDocument.objects.filter(key=key).values_list("body", "gzip_body", "etag", "slugs").first()
    if row is None:
        return None
    body, gzip_body, etag, slugs = row
    return Document(bytes(body), bytes(gzip_body), etag, frozenset(slugs))


def _read_logo(slug: str) -> Logo | None:
    row = App.objects.filter(slug=slug).values_list("logo", "logo_content_type").first()
    if row is None or not row[0]:
        return None
    content = bytes(row[0])
    return Logo(content, row[1] or "application/octet-stream", quoted_hash(content))


def _refresh() -> tuple | None:
    """The current version, asking the database once the last check is due; None if it could never be read."""
    current = _version.get("current", _UNCHECKED)
    if current is not _UNCHECKED:
        return current
    current = _version.get("current", stale=True)
    # The last version first, so that the other threads of the process keep it rather than all ask at once.
    _version.set("current", current, seconds=settings.FEED_VERSION_CHECK_SECONDS)
    try:
        version = tuple(
            FeedDocument.objects.filter(key__in=[documents.LIST_KEY, documents.BULK_KEY])
            .order_by("key")
            .values_list("key", "etag")
        )
    except DatabaseError:
        logger.warning("catalog feed: cannot read the current version; serving what is in memory", exc_info=True)
        return current
    _version.set("current", version, seconds=settings.FEED_VERSION_CHECK_SECONDS)
    return version


def _load(key: str, read: Callable):
    version = _refresh()
    held = _documents.get(key)
    if held is not None and held[0] == version:
        return held[1]
    try:
        value = read()
    except DatabaseError:
        logger.warning("catalog feed: cannot read %s; serving the last good copy if any", key, exc_info=True)
        if held is not None and held[1] is not None:
            return held[1]
        raise FeedUnavailable(RETRY_SOON) from None
    _documents.set(key, (version, value))
    return value
