"""Condition: the run goes on only when every test in `all` (and one in `any`, if given) holds."""

from automations.steps import StopRun

KIND = "condition"

OPERATORS = ("equals", "not_equals", "contains", "not_contains", "exists", "not_exists", "greater_than", "less_than")

_TEST = {
    "type": "object",
    "required": ["left", "op"],
    "additionalProperties": False,
    "properties": {"left": {}, "op": {"enum": list(OPERATORS)}, "right": {}},
}
SCHEMA = {
    "type": "object",
    "anyOf": [{"required": ["all"]}, {"required": ["any"]}],
    "properties": {
        "all": {"type": "array", "items": _TEST, "minItems": 1},
        "any": {"type": "array", "items": _TEST, "minItems": 1},
    },
}


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _as_text(value) -> str:
    return value if isinstance(value, str) else str(value)


def holds(test: dict) -> bool:
    """One test. Values compare as given, except that numbers written as text compare as numbers."""
    left, op, right = test.get("left"), test["op"], test.get("right")
    if op == "exists":
        return left not in (None, "")
    if op == "not_exists":
        return left in (None, "")
    if op in ("equals", "not_equals"):
        same = left == right or (_number(left) is not None and _number(left) == _number(right))
        return same if op == "equals" else not same
    if op in ("contains", "not_contains"):
        if isinstance(left, str):
            found = right is not None and _as_text(right) in left
        elif isinstance(left, (list, dict)):  # a list item, or an object's field name
            found = right in left
        else:
            found = False
        return found if op == "contains" else not found
    a, b = _number(left), _number(right)
    if a is None or b is None:
        return False
    return a > b if op == "greater_than" else a < b


def run(settings: dict, context) -> dict:
    all_hold = all(holds(test) for test in settings.get("all", []))
    any_holds = any(holds(test) for test in settings["any"]) if "any" in settings else True
    if not (all_hold and any_holds):
        raise StopRun("the condition was not met")
    return {"passed": True}
