"""The path syntax steps use to read trigger data and earlier steps' output (docs/automations.md).

A path is dot-separated names from the run's context: `trigger.body.customer.email`,
`steps.lookup.rows.0.plan`. A number picks a list item. A path that leads
nowhere is missing (None), never an error: senders leave fields out.

In a step's settings, a string that is exactly `{{ path }}` becomes the value
at that path, keeping its type (object, list, number); a string with
`{{ path }}` inside other text has each one replaced by the value as text
(objects and lists as JSON, missing as empty).
"""

import json
import re

PATH = r"[A-Za-z_][\w-]*(?:\.[\w-]+)*"
_WHOLE = re.compile(r"^\{\{\s*(" + PATH + r")\s*\}\}$")
_INSIDE = re.compile(r"\{\{\s*(" + PATH + r")\s*\}\}")

MISSING = None


def resolve(path: str, context: dict):
    value = context
    for name in path.split("."):
        if isinstance(value, dict):
            value = value.get(name, MISSING)
        elif isinstance(value, list) and name.isascii() and name.isdigit():  # int("²") raises though "²".isdigit()
            index = int(name)
            value = value[index] if index < len(value) else MISSING
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


def as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def render(value, context: dict):
    """The value with every {{ path }} in its strings, at any depth, filled from the context."""
    if isinstance(value, str):
        whole = _WHOLE.match(value)
        if whole:
            return resolve(whole[1], context)
        return _INSIDE.sub(lambda match: as_text(resolve(match[1], context)), value)
    if isinstance(value, dict):
        return {key: render(item, context) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, context) for item in value]
    return value


def references(value) -> set[str]:
    """Every path a step's settings refer to (to check, before any run, that steps refer only to earlier steps)."""
    if isinstance(value, str):
        return set(_INSIDE.findall(value))
    if isinstance(value, dict):
        return set().union(*(references(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(references(item) for item in value)) if value else set()
    return set()
