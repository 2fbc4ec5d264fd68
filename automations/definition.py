"""The automation definition document (DESIGN.md contract 4): its one schema and its validation.

Admin, import/export and (later) the MCP builder tools all read and write
this document; docs/automations.md describes it.
"""

from functools import cache

from jsonschema import Draft202012Validator

from automations import jsonsafe, paths, triggers
from automations.steps import kinds

STEP_ID = r"^[a-z][a-z0-9_]{0,39}$"
MAX_STEPS = 100


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


def _schema_errors(validator, document, prefix=()) -> list[str]:
    found = sorted(validator.iter_errors(document), key=lambda error: list(map(str, error.absolute_path)))
    return [f"{json_path([*prefix, *error.absolute_path])}: {error.message}" for error in found]


def _module_errors(module, settings: dict, prefix: tuple) -> list[str]:
    """A module's checks beyond its schema (say, a form's field names unique), once its schema passed."""
    check = getattr(module, "errors", None)
    return [f"{json_path([*prefix, *path])}: {message}" for path, message in (check(settings) if check else [])]


def errors(document) -> list[str]:
    """Every error of the document, each with its path such as $.steps[2].url; empty when it is valid."""
    if problems := [f"{json_path(path)}: {problem}" for path, problem in jsonsafe.unstorable(document)]:
        return problems
    problems = _schema_errors(Draft202012Validator(schema()), document)
    if problems:
        return problems
    trigger = document["trigger"]
    own = _schema_errors(_trigger_validator(trigger["type"]), trigger, ("trigger",))
    problems += own or _module_errors(triggers.types()[trigger["type"]], trigger, ("trigger",))
    seen: set[str] = set()
    for index, step in enumerate(document["steps"]):
        where = ("steps", index)
        own = _schema_errors(_step_validator(step["kind"]), step, where)
        problems += own or _module_errors(kinds()[step["kind"]], step, where)
        if step["id"] in seen:
            problems.append(f"{json_path([*where, 'id'])}: {step['id']!r} is the id of an earlier step")
        for path in sorted(paths.references(step)):
            root, _, rest = path.partition(".")
            if root == "steps" and rest.partition(".")[0] not in seen:
                problems.append(f"{json_path(where)}: {{{{{path}}}}} refers to no earlier step")
            elif root not in ("trigger", "steps"):
                problems.append(f"{json_path(where)}: {{{{{path}}}}} must start with trigger. or steps.")
        seen.add(step["id"])
    return problems


def validate(document) -> dict:
    """The document, if valid; else InvalidDefinition listing every error with its path."""
    problems = errors(document)
    if problems:
        raise InvalidDefinition(problems)
    return document
