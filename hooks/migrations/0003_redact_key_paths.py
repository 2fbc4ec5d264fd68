"""Deliveries' paths, runs' trigger data and step outputs, and lookup rows stored before keys were redacted get {key}.

Steps could copy {{trigger.path}} into their outputs and into lookup rows, so
every string of a run's trigger and steps and of a lookup row's data is
redacted, not only trigger.path.

Irreversible by nature: the keys are not kept anywhere in clear to put back.

redact() is frozen here as it was when this migration was written
(publickeys/redaction.py holds the living one), so that the migration
rewrites the same rows whatever that module becomes.
"""

import re

from django.db import migrations

BATCH = 1000

# --- redact(), frozen -------------------------------------------------------

PLACEHOLDER = "{key}"
# What ends a key in text: a path's or query's delimiters, whitespace, quotes and the brackets around quoted URLs.
SEPARATORS = "/?#&\"'<>\\`|,;)]"
_KEY = re.compile(rf"[^\s{re.escape(SEPARATORS)}]+")
_QUERY = re.compile(r"[^\s#\"'<>\\`|]*")


def _spelled(literal: str) -> str:
    """A pattern for every spelling of literal that a server decodes to it: each character as itself or as %XX."""
    parts = []
    for char in literal:
        escaped = "".join(f"[{digit}{digit.lower()}]" if digit.isalpha() else digit for digit in f"{ord(char):02X}")
        parts.append(f"(?:{re.escape(char)}|%{escaped})")
    return "".join(parts)


class _Shapes:
    """The key URL shapes, compiled for one way of spelling their fixed parts."""

    def __init__(self, spell):
        slash, question = spell("/"), spell("?")
        embed = spell("embed.js")
        self.paths = re.compile(
            "|".join(
                [
                    spell("/automation-"),  # also /webhook/automation-
                    spell("/webservice-"),
                    slash + spell("form") + slash + f"(?:(?:{spell('s')}|{spell('run')}){slash})?",
                    # /webchat/embed.js is the script itself; its key is in the query.
                    slash + spell("webchat") + slash + rf"(?!{embed}(?:[\s{re.escape(SEPARATORS)}]|$))",
                ]
            )
        )
        self.queries = re.compile(
            f"(?P<key>{slash}{spell('webchat')}{slash}{embed}{question})"
            f"|(?P<queue>{slash}{spell('moderation')}(?:{slash})?{question})"
        )
        # A parameter's value starts after ?, & (also spelled %26 or &amp;) and its name.
        self.parameters = {
            name: re.compile(rf"(?:^|&amp;|&|%26){spell(name)}{spell('=')}") for name in self.queries.groupindex
        }

    def key_spans(self, text: str):
        position = 0
        # Searched again from each match's next character: shapes may overlap (/webchat/form/{key}).
        while found := self.paths.search(text, position):
            if key := _KEY.match(text, found.end()):
                yield key.span()
            position = found.start() + 1
        for found in self.queries.finditer(text):
            start = found.end()
            query = _QUERY.match(text, start).group()
            for value in self.parameters[found.lastgroup].finditer(query):
                if key := _KEY.match(query, value.end()):
                    yield start + key.start(), start + key.end()


_LITERAL = _Shapes(re.escape)
_ENCODED = _Shapes(_spelled)  # slower; needed only where a % is


def redact(text: str) -> str:
    """text with the key of every public URL in it replaced by {key}, however the URL is spelled.

    Covers /automation-, /webhook/automation-, /webservice-, /form/,
    /form/s/, /form/run/, /webchat/, /webchat/embed.js?key= and
    /moderation?queue=, anywhere in the text (a full URL, a request line, a
    mounted path), with any of their characters percent-encoded as a server
    would decode them (/%61utomation-, automation%2D, webhook%2Fautomation-).
    A key runs to the next separator (SEPARATORS or whitespace). A shape
    matched where no key is (an app slug that begins with automation-) loses
    that segment: over-redacting costs a log line some detail, missing a
    key would hand out a credential.
    """
    merged: list[list[int]] = []
    shapes = _ENCODED if "%" in text else _LITERAL
    for start, end in sorted(shapes.key_spans(text)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text
    parts, position = [], 0
    for start, end in merged:
        parts += [text[position:start], PLACEHOLDER]
        position = end
    parts.append(text[position:])
    return "".join(parts)


# --- the migration -------------------------------------------------------------


def _save(model, changed: list, field: str) -> None:
    model.objects.bulk_update(changed, [field], batch_size=BATCH)
    changed.clear()


def redact_delivery_paths(Delivery) -> None:
    changed = []
    for delivery in Delivery.objects.only("pk", "path").iterator(chunk_size=BATCH):
        path = redact(delivery.path)[:2048]  # {key} may be longer than a short key it replaced
        if path != delivery.path:
            delivery.path = path
            changed.append(delivery)
            if len(changed) >= BATCH:
                _save(Delivery, changed, "path")
    _save(Delivery, changed, "path")


def _redacted(value):
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {name: _redacted(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def redact_json(model, fields: tuple[str, ...]) -> None:
    """Every string in these JSON fields of every row, redacted; a value nested too deep to walk is left as it is."""
    changed = []
    for row in model.objects.only("pk", *fields).iterator(chunk_size=BATCH):
        dirty = False
        for field in fields:
            value = getattr(row, field)
            try:
                redacted = _redacted(value)
            except RecursionError:
                continue
            if redacted != value:
                setattr(row, field, redacted)
                dirty = True
        if dirty:
            changed.append(row)
            if len(changed) >= BATCH:
                model.objects.bulk_update(changed, list(fields), batch_size=BATCH)
                changed.clear()
    if changed:
        model.objects.bulk_update(changed, list(fields), batch_size=BATCH)


def redact_paths(apps, schema_editor) -> None:
    redact_delivery_paths(apps.get_model("hooks", "Delivery"))
    redact_json(apps.get_model("automations", "Run"), ("trigger", "steps"))
    redact_json(apps.get_model("automations", "LookupRow"), ("data",))


class Migration(migrations.Migration):
    dependencies = [
        ("hooks", "0002_delivery_error"),
        ("automations", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(redact_paths, migrations.RunPython.noop, elidable=True),
    ]
