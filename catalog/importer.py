"""Importing a catalog document (docs/catalog-import.md): create or update apps and operations by slug."""

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils.dateparse import parse_datetime
from jsonschema import Draft202012Validator

from automations import jsonsafe
from catalog.models import SLUG_PATTERN, App, Operation

MAX_LOGO_BYTES = 256 * 1024
LOGO_TYPES = ("image/png", "image/svg+xml", "image/jpeg", "image/webp", "image/gif")

OPERATION_SCHEMA = {
    "type": "object",
    "required": ["key", "name"],
    "additionalProperties": False,
    "properties": {
        "key": {"type": "string", "pattern": r"^[a-z0-9_.:-]+$", "maxLength": 100},
        "name": {"type": "string", "minLength": 1, "maxLength": 200},
        "description": {"type": "string"},
        "listed": {"type": "boolean"},
        "endpoint": {"type": "string", "maxLength": 500},
        "http_method": {"enum": ["", "GET", "POST", "PUT", "PATCH", "DELETE"]},
        "request_template": {"type": "object"},
        "delivery_mode": {"enum": [choice for choice, _ in Operation.DeliveryMode.choices]},
        "instructions": {"type": "string", "maxLength": 5000},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["apps"],
    "additionalProperties": False,
    "properties": {
        "apps": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["slug", "name", "auth_type", "app_domain"],
                "additionalProperties": False,
                "properties": {
                    "slug": {"type": "string", "pattern": SLUG_PATTERN, "maxLength": 64},
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "description": {"type": "string"},
                    "category": {"type": ["string", "null"], "maxLength": 100},
                    "auth_type": {"type": "string", "pattern": r"^[a-z][a-z0-9_]*$", "maxLength": 40},
                    "app_domain": {"type": "string", "minLength": 1, "maxLength": 253},
                    "popularity": {"type": "integer", "minimum": 0},
                    "published": {"type": "boolean"},
                    "retired_at": {"type": ["string", "null"]},
                    "auth_config": {"type": "object"},
                    "logo": {
                        "type": ["object", "null"],
                        "required": ["content_type", "base64"],
                        "additionalProperties": False,
                        "properties": {"content_type": {"enum": list(LOGO_TYPES)}, "base64": {"type": "string"}},
                    },
                    "triggers": {"type": "array", "items": OPERATION_SCHEMA},
                    "actions": {"type": "array", "items": OPERATION_SCHEMA},
                },
            },
        }
    },
}
_VALIDATOR = Draft202012Validator(SCHEMA)


class InvalidCatalog(Exception):
    """The document breaks the format; `errors` holds "path: message" lines. Nothing was changed."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    operations_created: int = 0
    operations_updated: int = 0
    operations_deleted: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)


def _path(parts) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def validate(document) -> None:
    """Raise InvalidCatalog listing every error with its path, such as $.apps[3].triggers[0].name."""
    if unstorable := jsonsafe.unstorable(document):  # NUL, NaN, too deep: what no database stores as it is
        raise InvalidCatalog([f"{_path(path)}: {problem}" for path, problem in unstorable])
    errors = [
        f"{_path(error.absolute_path)}: {error.message}"
        for error in sorted(_VALIDATOR.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    ]
    if not errors:
        errors = list(_semantic_errors(document["apps"]))
    if errors:
        raise InvalidCatalog(errors)


def _semantic_errors(apps: list[dict]):
    seen = {}
    for index, app in enumerate(apps):
        where = f"$.apps[{index}]"
        if app["slug"] in seen:
            yield f"{where}.slug: {app['slug']!r} already appears at $.apps[{seen[app['slug']]}]"
        seen.setdefault(app["slug"], index)
        if app.get("retired_at") and _parse_time(app["retired_at"]) is None:
            yield f"{where}.retired_at: not an RFC 3339 time with an offset: {app['retired_at']!r}"
        if app.get("logo"):
            try:
                content = base64.b64decode(app["logo"]["base64"], validate=True)
            except (binascii.Error, ValueError):
                yield f"{where}.logo.base64: not valid base64"
            else:
                if not content or len(content) > MAX_LOGO_BYTES:
                    yield f"{where}.logo.base64: the logo must be 1 to {MAX_LOGO_BYTES} bytes, got {len(content)}"
        for kind in ("triggers", "actions"):
            keys = {}
            for position, operation in enumerate(app.get(kind, [])):
                if operation["key"] in keys:
                    first = keys[operation["key"]]
                    yield f"{where}.{kind}[{position}].key: {operation['key']!r} already appears at {kind}[{first}]"
                keys.setdefault(operation["key"], position)


def _parse_time(value: str) -> datetime | None:
    try:
        moment = parse_datetime(value)
    except ValueError:
        return None
    return moment if moment is not None and moment.tzinfo is not None else None


@transaction.atomic
def import_catalog(document) -> ImportReport:
    """Create or update every app of the document, by slug, with exactly the operations it lists.

    Apps the document does not mention are left alone. Rows whose content is
    unchanged are not saved, so importing the same document twice changes
    nothing, not even last_updated.
    """
    validate(document)
    report = ImportReport()
    existing = {app.slug: app for app in App.objects.filter(slug__in=[a["slug"] for a in document["apps"]])}
    for data in document["apps"]:
        app = existing.get(data["slug"])
        created = app is None
        if created:
            app = App(slug=data["slug"])
        app_changed = _assign(app, _app_values(data))
        if app_changed:
            app.save()
        ops = _sync_operations(app, data, report)
        if ops and not app_changed:
            app.save(update_fields=["updated_at"])  # an operation removed or edited is an edit of the connector
        if created:
            report.created.append(app.slug)
        elif app_changed or ops:
            report.updated.append(app.slug)
        else:
            report.unchanged.append(app.slug)
    return report


def _app_values(data: dict) -> dict:
    logo = data.get("logo")
    return {
        "name": data["name"],
        "description": data.get("description", ""),
        "category": data.get("category") or None,
        "auth_type": data["auth_type"],
        "app_domain": data["app_domain"],
        "popularity": data.get("popularity", 0),
        "published": data.get("published", True),
        "retired_at": _parse_time(data["retired_at"]) if data.get("retired_at") else None,
        "auth_config": data.get("auth_config", {}),
        "logo": base64.b64decode(logo["base64"]) if logo else None,
        "logo_content_type": logo["content_type"] if logo else "",
    }


def _assign(instance, values: dict) -> bool:
    changed = False
    for name, value in values.items():
        current = getattr(instance, name)
        if isinstance(current, memoryview):
            current = bytes(current)
        if current != value:
            setattr(instance, name, value)
            changed = True
    return changed


def _sync_operations(app: App, data: dict, report: ImportReport) -> bool:
    existing = {(op.kind, op.key): op for op in app.operations.all()} if app.pk else {}
    wanted = set()
    changed = False
    kinds = ((Operation.Kind.TRIGGER, data.get("triggers", [])), (Operation.Kind.ACTION, data.get("actions", [])))
    for kind, items in kinds:
        for position, item in enumerate(items):
            wanted.add((kind, item["key"]))
            values = {
                "name": item["name"],
                "description": item.get("description", ""),
                "listed": item.get("listed", True),
                "endpoint": item.get("endpoint", ""),
                "http_method": item.get("http_method", ""),
                "request_template": item.get("request_template", {}),
                "delivery_mode": item.get("delivery_mode", ""),
                "instructions": item.get("instructions", ""),
                "position": position,
            }
            operation = existing.get((kind, item["key"]))
            if operation is None:
                Operation.objects.create(app=app, kind=kind, key=item["key"], **values)
                report.operations_created += 1
                changed = True
            elif _assign(operation, values):
                operation.save()
                report.operations_updated += 1
                changed = True
    gone = [op.pk for key, op in existing.items() if key not in wanted]
    if gone:
        Operation.objects.filter(pk__in=gone).delete()
        report.operations_deleted += len(gone)
        changed = True
    return changed
