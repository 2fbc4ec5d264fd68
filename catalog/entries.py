"""App entries exactly as the feed publishes them (SPEC 2.1): public fields only, each with its etag."""

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime

from django.conf import settings

from catalog.models import Operation
from catalog.popularity import rank
from catalog.selectors import connectable_apps
from catalog.sources import APP_COLUMNS, OPERATION_COLUMNS, Digest, listed_operations

# Field order of an entry in every body; triggers and actions only in detail and bulk.
SUMMARY_FIELDS = (
    "slug",
    "name",
    "description",
    "category",
    "auth_type",
    "app_domain",
    "logo_url",
    "connect_url",
    "last_updated",
    "etag",
    "retired",
    "retired_at",
    "tier",
    "sort_order",
    "trigger_count",
    "action_count",
    "last_op_modified",
)
DETAIL_FIELDS = SUMMARY_FIELDS + ("triggers", "actions")
OPERATION_FIELDS = ("name", "description")


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def dumps(value) -> bytes:
    """Compact UTF-8 JSON, the encoding of every feed body."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def quoted_hash(*chunks: bytes) -> str:
    """A strong validator: the first 128 bits of SHA-256 over the chunks, quoted as ETag wants."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return f'"{digest.hexdigest()[:32]}"'


def entry_etag(content: dict) -> str:
    """Hash of everything the entry shows, operations included, keys sorted so order cannot matter."""
    return quoted_hash(json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode())


def build_entry(app: dict, operations: list[tuple], *, sort_order: int, tier: str, base_url: str) -> dict:
    """One detail entry. `operations` are (kind, name, description, updated_at) of listed operations, in order."""
    triggers = [{"name": n, "description": d} for k, n, d, _ in operations if k == Operation.Kind.TRIGGER]
    actions = [{"name": n, "description": d} for k, n, d, _ in operations if k == Operation.Kind.ACTION]
    last_op = max((u for *_, u in operations), default=None)
    last_updated = max(app["updated_at"], last_op) if last_op else app["updated_at"]
    slug = app["slug"]
    content = {
        "slug": slug,
        "name": app["name"],
        "description": app["description"],
        "category": app["category"] or None,
        "auth_type": app["auth_type"],
        "app_domain": app["app_domain"],
        "logo_url": f"{base_url}/catalog/v1/apps/{slug}/logo",
        "connect_url": f"{base_url}/signup?app={slug}",
        "last_updated": rfc3339(last_updated),
        "retired": app["retired_at"] is not None,
        "tier": tier,
        "sort_order": sort_order,
        "trigger_count": len(triggers),
        "action_count": len(actions),
        "last_op_modified": rfc3339(last_op) if last_op else None,
        "triggers": triggers,
        "actions": actions,
    }
    if app["retired_at"] is not None:
        content["retired_at"] = rfc3339(app["retired_at"])
    content["etag"] = entry_etag(content)
    return {field: content[field] for field in DETAIL_FIELDS if field in content}


def summary_of(entry: dict) -> dict:
    return {field: value for field, value in entry.items() if field not in ("triggers", "actions")}


def iter_entries(now: datetime | None = None, digest: Digest | None = None) -> Iterator[dict]:
    """Detail entries of every connectable app, in feed order (sort_order 1..N).

    Reads plain rows rather than model instances: a 10,000-app catalog with
    its operations fits in a fraction of the memory this way. `digest` is fed
    the rows read, as catalog.sources reads them, by the first entry.
    """
    apps = {row["id"]: row for row in connectable_apps(now).values(*APP_COLUMNS)}
    if digest is not None:
        for app_id in sorted(apps):
            digest.app(tuple(apps[app_id][column] for column in APP_COLUMNS))
    operations = defaultdict(list)
    for row in listed_operations(now).values_list(*OPERATION_COLUMNS).iterator(chunk_size=5000):
        if digest is not None:
            digest.operation(row)
        app_id, *operation = row
        operations[app_id].append(tuple(operation))
    ranks = rank({row["slug"]: row["popularity"] for row in apps.values()})
    base_url = settings.BASE_URL
    for app in sorted(apps.values(), key=lambda row: ranks[row["slug"]].sort_order):
        slug_rank = ranks[app["slug"]]
        yield build_entry(
            app, operations.pop(app["id"], []), sort_order=slug_rank.sort_order, tier=slug_rank.tier, base_url=base_url
        )
