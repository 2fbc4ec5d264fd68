"""The field list of a form, one schema shared by the `form` trigger and the `form` step, and its cross-field checks.

A field is an object: `name` (what steps read, as `{{trigger.body.<name>}}`
or `{{steps.<id>.<name>}}`), `type`, and the settings its type takes. The
page that shows a field list lives in interfaces/forms/fields.py; this module holds
only the document's rules, so that automations validates definitions without
importing the app that serves pages.
"""

FIELD_NAME = r"^[a-z][a-z0-9_]{0,39}$"
MAX_FIELDS = 50
MAX_OPTIONS = 200
MAX_FILES = 20
TYPES = ("text", "long_text", "email", "number", "select", "checkbox", "date", "hidden", "file")
# A text answer's longest default length, and the longest any field may allow.
TEXT_MAX = 1000
LONG_TEXT_MAX = 10_000
ANY_TEXT_MAX = 100_000

_TEXT = {"type": "string", "maxLength": 1000}
_SCALAR = {"type": ["string", "number", "boolean"]}

VISIBLE_IF = {
    "type": "object",
    "required": ["field"],
    "additionalProperties": False,
    "minProperties": 2,
    "maxProperties": 2,
    "properties": {
        "field": {"type": "string", "pattern": FIELD_NAME},
        "equals": _SCALAR,
        "not_equals": _SCALAR,
        "in": {"type": "array", "minItems": 1, "maxItems": MAX_OPTIONS, "items": _SCALAR},
        "is_set": {"type": "boolean"},
    },
}

FIELD = {
    "type": "object",
    "required": ["name", "type"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": FIELD_NAME},
        "type": {"enum": list(TYPES)},
        "label": _TEXT,
        "help": _TEXT,
        "placeholder": _TEXT,
        "required": {"type": "boolean"},
        "default": {"type": ["string", "number", "boolean", "array"], "maxItems": MAX_OPTIONS},
        # Whether ?<name>=value in the page's address fills it in (default: yes, files never).
        "prefill": {"type": "boolean"},
        "visible_if": VISIBLE_IF,
        # text, long_text
        "min_length": {"type": "integer", "minimum": 0, "maximum": ANY_TEXT_MAX},
        "max_length": {"type": "integer", "minimum": 1, "maximum": ANY_TEXT_MAX},
        # number
        "min": {"type": "number"},
        "max": {"type": "number"},
        "integer": {"type": "boolean"},
        # select
        "options": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_OPTIONS,
            "items": {
                "oneOf": [
                    {"type": "string", "minLength": 1, "maxLength": 200},
                    {
                        "type": "object",
                        "required": ["value"],
                        "additionalProperties": False,
                        "properties": {"value": {"type": "string", "minLength": 1, "maxLength": 200}, "label": _TEXT},
                    },
                ]
            },
        },
        "multiple": {"type": "boolean"},
        # file
        "max_files": {"type": "integer", "minimum": 1, "maximum": MAX_FILES},
        "max_bytes": {"type": "integer", "minimum": 1},
        # MIME types (image/png, image/*) or extensions (.pdf)
        "accept": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {"type": "string", "pattern": r"^(\.[A-Za-z0-9]{1,10}|[a-z]+/([a-z0-9.+-]+|\*))$"},
        },
    },
    "allOf": [
        {"if": {"properties": {"type": {"const": "select"}}}, "then": {"required": ["options"]}},
    ],
}

FIELDS = {"type": "array", "minItems": 1, "maxItems": MAX_FIELDS, "items": FIELD}


def errors(fields: list) -> list[tuple[tuple, str]]:
    """What the schema cannot say: names unique, visible_if naming an earlier field, settings of another type.

    Each error is (path inside the list, message), for the caller to prefix
    with where the list sits ($.trigger.fields, $.steps[2].fields).
    """
    found: list[tuple[tuple, str]] = []
    seen: dict[str, dict] = {}
    for index, field in enumerate(fields):
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            continue
        kind = field.get("type")
        if field["name"] in seen:
            found.append(((index, "name"), f"{field['name']!r} is the name of an earlier field"))
        for setting, types in _ONLY_FOR.items():
            if setting in field and kind not in types:
                found.append(((index, setting), f"{setting} does not apply to a {kind} field"))
        condition = field.get("visible_if")
        if isinstance(condition, dict) and condition.get("field") not in seen:
            found.append(((index, "visible_if", "field"), f"{condition.get('field')!r} names no earlier field"))
        if isinstance(condition, dict) and seen.get(condition.get("field"), {}).get("type") == "select":
            found += _not_options(index, condition, seen[condition["field"]])
        if "min" in field and "max" in field and field["min"] > field["max"]:
            found.append(((index, "min"), "min is above max"))
        if "min_length" in field and "max_length" in field and field["min_length"] > field["max_length"]:
            found.append(((index, "min_length"), "min_length is above max_length"))
        if kind == "hidden" and field.get("required"):
            found.append(((index, "required"), "a hidden field cannot be required"))
        seen[field["name"]] = field
    return found


def as_page_writes(wanted) -> str:
    """A condition's value as text the way the form page's script writes it (String(x)): 18.0 as "18", null as
    "null". The server compares text with it so, and the check below names options so (interfaces/forms/fields.py)."""
    if wanted is None:
        return "null"
    if isinstance(wanted, bool):
        return str(wanted).lower()
    if isinstance(wanted, float) and wanted.is_integer() and abs(wanted) < 1e16:
        return str(int(wanted))
    return str(wanted)


def _not_options(index: int, condition: dict, select: dict) -> list[tuple[tuple, str]]:
    """A condition on a select naming a value none of its options has: it could never hold as meant ("Phone" for
    the option "phone"), and the page would show what the server drops."""
    options = [option.get("value") if isinstance(option, dict) else option for option in select.get("options") or []]
    values = {str(option) for option in options}  # an option's value is text: 1 names the option "1"
    found = []
    for key in ("equals", "not_equals", "in"):
        if key not in condition:
            continue
        wanted = condition[key] if key == "in" and isinstance(condition[key], list) else [condition[key]]
        for n, value in enumerate(wanted):
            if as_page_writes(value) not in values:
                path = (index, "visible_if", key, n) if key == "in" else (index, "visible_if", key)
                found.append((path, f"{value!r} is not one of {select['name']!r}'s option values"))
    return found


_ONLY_FOR = {
    "min_length": ("text", "long_text"),
    "max_length": ("text", "long_text"),
    "placeholder": ("text", "long_text", "email", "number"),
    "min": ("number",),
    "max": ("number",),
    "integer": ("number",),
    "options": ("select",),
    "multiple": ("select",),
    "max_files": ("file",),
    "max_bytes": ("file",),
    "accept": ("file",),
}


# What a form shows, the same for the hosted form (triggers/form.py) and a form a step asks (steps/form.py).
FORM_PROPERTIES = {
    "title": {"type": "string", "maxLength": 200},
    "description": {"type": "string", "maxLength": 5000},
    "submit_label": {"type": "string", "minLength": 1, "maxLength": 100},
    "fields": FIELDS,
}
