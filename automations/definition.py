"""The automation definition document (DESIGN.md contract 4): its one schema and its validation.

Admin, import/export and (later) the MCP builder tools all read and write
this document; docs/automations.md describes it.
"""

import itertools
from functools import cache

from jsonschema import Draft202012Validator

from automations import jsonsafe, paths, triggers
from automations.steps import kinds

STEP_ID = r"^[a-z][a-z0-9_]{0,39}$"
MAX_STEPS = 100
# Errors listed at most: a person fixes a document a few at a time, and a hostile one could have millions.
MAX_ERRORS = 100


class InvalidDefinition(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


SETTINGS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "suppress_duplicates": {"type": "boolean"},
        "retries": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "max_attempts": {"type": "integer", "minimum": 1, "maximum": 10},
                "backoff_seconds": {"type": "integer", "minimum": 1, "maximum": 86400},
            },
        },
    },
}


@cache
def schema() -> dict:
    return {
        "type": "object",
        "required": ["trigger", "steps"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "trigger": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"enum": sorted(triggers.types())}},
            },
            "steps": {
                "type": "array",
                "maxItems": MAX_STEPS,
                "items": {
                    "type": "object",
                    "required": ["id", "kind"],
                    "properties": {"id": {"type": "string", "pattern": STEP_ID}, "kind": {"enum": sorted(kinds())}},
                },
            },
            "settings": SETTINGS_SCHEMA,
        },
    }


@cache
def _step_validator(kind: str) -> Draft202012Validator:
    return _own_validator(kinds()[kind].SCHEMA, ("id", "kind"))


@cache
def _trigger_validator(type_: str) -> Draft202012Validator:
    return _own_validator(triggers.types()[type_].SCHEMA, ("type",))


def _own_validator(own: dict, common: tuple) -> Draft202012Validator:
    """A module's schema of its own settings, with the common fields allowed and any other field refused."""
    properties = {**own.get("properties", {}), **{name: {} for name in common}}
    return Draft202012Validator({**own, "properties": properties, "additionalProperties": False})


def json_path(parts) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def errors(document) -> list[str]:
    """Every error of the document, each with its path such as $.steps[2].url, in the document's order; empty when
    it is valid.

    Every part that can be read is checked, whatever is wrong elsewhere: a person fixing a document in a form sees
    all its problems at once, not one per attempt (a step of an unknown kind does not hide a bad reference in the
    next one).
    """
    if problems := [f"{json_path(path)}: {problem}" for path, problem in jsonsafe.unstorable(document)]:
        return problems
    steps = document.get("steps") if isinstance(document, dict) else None
    if isinstance(steps, list) and len(steps) > MAX_STEPS:  # checking each of a million steps helps nobody
        return [f"$.steps: {len(steps)} steps, more than the {MAX_STEPS} a definition may have"]
    found = _located(Draft202012Validator(schema()), document)
    if not isinstance(document, dict):
        return [message for _, message in found]
    trigger = document.get("trigger")
    type_ = trigger.get("type") if isinstance(trigger, dict) else None
    if isinstance(type_, str) and type_ in triggers.types():
        found += _own_errors(_trigger_validator(type_), triggers.types()[type_], trigger, ("trigger",))
    seen: set[str] = set()
    for index, step in enumerate(steps[:MAX_STEPS] if isinstance(steps, list) else []):
        if not isinstance(step, dict):
            continue
        where = ("steps", index)
        kind, step_id = step.get("kind"), step.get("id")
        if isinstance(kind, str) and kind in kinds():
            found += _own_errors(_step_validator(kind), kinds()[kind], step, where)
        if isinstance(step_id, str) and step_id in seen:
            found.append(([*where, "id"], f"{step_id!r} is the id of an earlier step"))
        for path in sorted(paths.references(step)):
            root, _, rest = path.partition(".")
            if root == "steps" and rest.partition(".")[0] not in seen:
                found.append((list(where), f"{{{{{path}}}}} refers to no earlier step"))
            elif root not in ("trigger", "steps"):
                found.append((list(where), f"{{{{{path}}}}} must start with trigger. or steps."))
        if isinstance(step_id, str):
            seen.add(step_id)
    found.sort(key=lambda error: _in_document_order(error[0]))  # stable: one place's errors keep their order
    shown = [f"{json_path(path)}: {message}" for path, message in found[:MAX_ERRORS]]
    return shown + ([f"$: and {len(found) - MAX_ERRORS} more errors"] if len(found) > MAX_ERRORS else [])


_TOP = {"name": 0, "trigger": 1, "steps": 2, "settings": 3}


def _in_document_order(path: list) -> tuple:
    """The path as a sort key: the top-level fields as a document lists them, then $.steps[2] before $.steps[10];
    within one step, the errors keep the order their checks found them in."""
    if not path:
        return (-1, -1)
    return (_TOP.get(path[0], len(_TOP)), path[1] if len(path) > 1 and isinstance(path[1], int) else -1)


def _located(validator, document, prefix=()) -> list[tuple[list, str]]:
    """The validator's errors, at most MAX_ERRORS + 1 of them: enough to say that more followed."""
    errors = itertools.islice(validator.iter_errors(document), MAX_ERRORS + 1)
    return [([*prefix, *error.absolute_path], error.message) for error in errors]


def _own_errors(validator, module, settings: dict, prefix: tuple) -> list[tuple[list, str]]:
    """A trigger's or step's errors of its own schema, or, once that passes, of its module's further checks."""
    own = _located(validator, settings, prefix)
    if own:
        return own
    check = getattr(module, "errors", None)
    return [([*prefix, *path], message) for path, message in (check(settings) if check else [])]


def validate(document) -> dict:
    """The document, if valid; else InvalidDefinition listing every error with its path."""
    problems = errors(document)
    if problems:
        raise InvalidDefinition(problems)
    return document
