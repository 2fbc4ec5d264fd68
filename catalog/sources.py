"""What the feed is built from, as one digest: a rebuild of an unchanged catalog stops at it."""

import functools
import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings

from catalog.models import Operation
from catalog.selectors import connectable_apps

# The rows an entry is computed from (catalog/entries.py builds from the same ones).
APP_COLUMNS = (
    "id",
    "slug",
    "name",
    "description",
    "category",
    "auth_type",
    "app_domain",
    "retired_at",
    "updated_at",
    "popularity",
)
OPERATION_COLUMNS = ("app_id", "kind", "name", "description", "updated_at")
OPERATION_ORDER = ("app_id", "kind", "position", "key")
# Rows read at a time: the digest's memory stays at one chunk, whatever the catalog's size.
CHUNK_ROWS = 500
# The code that turns rows into bodies: a deploy that changes it rebuilds the feed at the next build.
CODE_FILES = ("entries.py", "popularity.py", "sources.py")


@functools.cache
def code_digest() -> bytes:
    folder, digest = Path(__file__).resolve().parent, hashlib.sha256()
    for name in CODE_FILES:
        try:
            digest.update((folder / name).read_bytes())
        except OSError:  # deployed without its sources: a new format then shows with the catalog's next edit
            digest.update(name.encode())
    return digest.digest()


class Digest:
    """SHA-256 over BASE_URL, the feed's code, the apps by id, then their listed operations in feed order.

    It hashes the rows themselves rather than trusting updated_at, since a
    queryset update (popularity, a rename by a script) does not touch
    updated_at. Equal digests mean the same rows in, so the same bodies out.
    """

    def __init__(self):
        self.hash = hashlib.sha256(settings.BASE_URL.encode() + b"\0" + code_digest())
        self.apps = 0
        self.in_operations = False

    def app(self, row: tuple) -> None:
        self.hash.update(repr(row).encode())
        self.apps += 1

    def operation(self, row: tuple) -> None:
        if not self.in_operations:
            self.hash.update(b"\0operations")
            self.in_operations = True
        self.hash.update(repr(row).encode())

    def hexdigest(self) -> str:
        if not self.in_operations:  # a catalog without operations hashes as one whose operations were read
            self.hash.update(b"\0operations")
            self.in_operations = True
        return self.hash.hexdigest()


@dataclass(frozen=True)
class Sources:
    digest: str
    count: int


def listed_operations(now: datetime):
    """The listed operations of the connectable apps, in the order entries list them."""
    return Operation.objects.filter(app_id__in=connectable_apps(now).values("id"), listed=True).order_by(
        *OPERATION_ORDER
    )


def feed_sources(now: datetime) -> Sources:
    """The digest of every value the feed's bodies are computed from, and how many apps it lists.

    Beat rebuilds the feed every 15 minutes and the catalog has almost always
    not changed. Building the entries to find that out held the whole catalog
    in memory at once (some 8 MB of objects for 2,000 apps), which each worker
    process then kept as its high-water mark. This reads the same rows a chunk
    at a time instead. The build stores the digest of the rows it built from
    (catalog.entries.iter_entries feeds a Digest too), so a catalog edited
    between this read and the build's is read again next time.
    """
    digest = Digest()
    apps = connectable_apps(now).order_by("id").values_list(*APP_COLUMNS)
    for row in apps.iterator(chunk_size=CHUNK_ROWS):
        digest.app(row)
    for row in listed_operations(now).values_list(*OPERATION_COLUMNS).iterator(chunk_size=CHUNK_ROWS):
        digest.operation(row)
    return Sources(digest=digest.hexdigest(), count=digest.apps)
