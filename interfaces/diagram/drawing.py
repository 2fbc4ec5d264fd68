"""The automation diagram (/automation?uuid=...): the trigger and every step, readably, with the latest run's states.

build() turns an automation's definition into a list of nodes a template
draws top to bottom. Each step kind known today has its settings said in
words (a condition's tests, a delay's length, a request's method and URL);
any other kind, including kinds added later, shows its settings as names
and values. Header values and settings whose name says secret, token,
password, key or authorization are masked: the page is the owner's, but
it is also what ends up on a shared screen or in a screenshot.
"""

import json
import re
import uuid
from dataclasses import dataclass, field

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from automations.models import Automation, Run
from automations.steps import kinds

MASK = "••••••"
_SECRET_NAME = re.compile(
    r"secret|token|passw|api[_-]?key|authori[sz]ation|cookie|signature|credential|^key$|^auth$|^sig$", re.IGNORECASE
)
# In a URL: the password of its user information, and its query's name=value pairs.
_URL_PASSWORD = re.compile(r"(?<=//)([^/?#@:]*):[^/?#]*@")  # to the authority's last @, where browsers split
_QUERY_PAIR = re.compile(r"(?<=[?&])([^=&#]*)=([^&#]*)")
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# What a waiting record may show: links and keys in it are credentials of the person asked, not the owner's to see.
_HIDDEN_WAIT_FIELDS = re.compile(r"url|link|key|token|secret|email", re.IGNORECASE)
MAX_VALUE_CHARS = 600

OPERATORS = {
    "equals": gettext_lazy("equals"),
    "not_equals": gettext_lazy("does not equal"),
    "contains": gettext_lazy("contains"),
    "not_contains": gettext_lazy("does not contain"),
    "exists": gettext_lazy("exists"),
    "not_exists": gettext_lazy("does not exist"),
    "greater_than": gettext_lazy("is greater than"),
    "less_than": gettext_lazy("is less than"),
}
TRIGGERS = {
    "webhook": gettext_lazy("A request to its webhook URL (or its web service URL, which waits for the run)"),
    "web_service": gettext_lazy("A request to its web service URL, which waits for the run"),
    "form": gettext_lazy("A submission of its hosted form"),
    "chat": gettext_lazy("A visitor's message in its chat widget"),
}
# Kinds that wait for a person; any kind whose module can resume may wait (a delay waits for a time).
PERSON_KINDS = {"form", "approval"}


@dataclass
class Node:
    kind: str
    title: str
    summary: str = ""
    settings: list[tuple[str, str]] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    waits: str = ""
    state: str = ""  # the latest run's status of this step: succeeded, failed, waiting, stopped, or "" (not reached)
    state_label: str = ""
    waiting_for: list[tuple[str, str]] = field(default_factory=list)
    error: str = ""
    note: str = ""


@dataclass
class Diagram:
    automation: Automation
    trigger: Node
    steps: list[Node]
    run: Run | None
    run_used_other_definition: bool


def parse_uuid(value: str) -> uuid.UUID | None:
    """The canonical lower-case form only: braces, URNs, upper case or missing hyphens name no automation."""
    if not isinstance(value, str) or not _CANONICAL_UUID.fullmatch(value):
        return None
    return uuid.UUID(value)


def automation_of(*, user, automation_uuid: str) -> Automation | None:
    """The user's automation of that uuid; None for anyone else's, an unknown one, or a malformed uuid, alike."""
    parsed = parse_uuid(automation_uuid)
    if parsed is None or not getattr(user, "is_authenticated", False):
        return None
    return Automation.objects.filter(uuid=parsed, owner=user).first()


def build(automation: Automation) -> Diagram:
    """The trigger and every step of the automation's definition, each with the latest run's state."""
    definition = automation.definition or {}
    run = automation.runs.order_by("-started_at", "-pk").first()
    records = {record.get("id"): record for record in (run.steps if run else []) if isinstance(record, dict)}
    steps = []
    for step in definition.get("steps", []):
        node = step_node(step)
        if run is not None:
            _apply_record(node, records.get(step.get("id")))
        steps.append(node)
    return Diagram(
        automation=automation,
        trigger=trigger_node(definition.get("trigger") or {}),
        steps=steps,
        run=run,
        run_used_other_definition=bool(run and run.definition and run.definition != definition),
    )


def trigger_node(trigger: dict) -> Node:
    kind = str(trigger.get("type", "webhook"))
    node = Node(kind=kind, title=_("Trigger"), summary=str(TRIGGERS.get(kind, _("Trigger of type %s") % kind)))
    node.settings = _generic({name: value for name, value in trigger.items() if name != "type"})
    return node


def step_node(step: dict) -> Node:
    kind = str(step.get("kind", "?"))
    settings = {name: value for name, value in step.items() if name not in ("id", "kind")}
    node = Node(kind=kind, title=str(step.get("id", "?")))
    describe = _DESCRIBERS.get(kind)
    if describe is None:
        node.settings = _generic(settings)
    else:
        describe(node, settings)
    module = kinds().get(kind)
    if kind in PERSON_KINDS:
        node.waits = _("Waits for a person")
    elif module is not None and hasattr(module, "resume") and not node.waits:
        node.waits = _("May wait")
    return node


def _apply_record(node: Node, record: dict | None) -> None:
    if record is None:
        node.state, node.state_label = "not-reached", _("not reached")
        return
    status = str(record.get("status", "running"))
    node.state = status
    node.state_label = {
        "succeeded": _("succeeded"),
        "failed": _("failed"),
        "waiting": _("waiting"),
        "stopped": _("stopped here"),
        "running": _("running"),
    }.get(status, status)
    node.error = str(record.get("error", ""))[:MAX_VALUE_CHARS]
    node.note = str(record.get("note", ""))[:MAX_VALUE_CHARS]
    if status == "waiting":
        waiting_for = record.get("waiting_for") or {}
        shown = {
            name: value
            for name, value in waiting_for.items()
            if name not in ("step", "kind") and not _HIDDEN_WAIT_FIELDS.search(str(name))
        }
        node.waiting_for = _generic(shown)


# --- one describer per step kind known today --------------------------------------------------------------------


def _condition(node: Node, settings: dict) -> None:
    for word, label in (("all", _("Goes on only if all of these hold:")), ("any", _("Goes on if any of these holds:"))):
        tests = settings.get(word)
        if isinstance(tests, list) and tests:
            node.summary = label if not node.summary else node.summary
            for test in tests:
                node.tests.append(_test_text(test) if isinstance(test, dict) else _value(test))
    node.settings = _generic({name: value for name, value in settings.items() if name not in ("all", "any")})
    if settings.get("all") and settings.get("any"):
        node.summary = _("Goes on only if all of these hold, and any of the rest:")
    if not node.summary:
        node.summary = _("A condition")
    node.note = _("Otherwise the run stops here (not a failure).")


def _test_text(test: dict) -> str:
    op = str(test.get("op", "?"))
    words = str(OPERATORS.get(op, op))
    if op in ("exists", "not_exists"):
        return f"{_value(test.get('left'))} {words}"
    return f"{_value(test.get('left'))} {words} {_value(test.get('right'))}"


def _delay(node: Node, settings: dict) -> None:
    if "seconds" in settings:
        seconds = settings["seconds"]
        node.summary = _("Waits %s") % (_duration(seconds) if isinstance(seconds, int | float) else _value(seconds))
    elif "until" in settings:
        node.summary = _("Waits until %s") % _value(settings["until"])
    node.waits = _("Waits for a time")
    node.settings = _generic({name: value for name, value in settings.items() if name not in ("seconds", "until")})


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    parts = []
    for size, unit in ((86400, _("d")), (3600, _("h")), (60, _("min")), (1, _("s"))):
        if seconds >= size or (size == 1 and not parts):
            parts.append(f"{seconds // size} {unit}")
            seconds %= size
    return " ".join(parts)


def _http_request(node: Node, settings: dict) -> None:
    node.summary = f"{settings.get('method', 'GET')} {_value(_url(settings.get('url')))}"
    shown = {name: value for name, value in settings.items() if name not in ("method", "url", "headers")}
    headers = settings.get("headers")
    if isinstance(headers, dict) and headers:
        shown = {"headers": {name: MASK for name in headers}, **shown}  # header values are often credentials
    node.settings = _generic(shown)


def _lookup_rows(node: Node, settings: dict) -> None:
    scope = _("this automation’s") if settings.get("scope", "automation") == "automation" else _("the account’s")
    node.summary = _("%(action)s rows of %(scope)s table “%(table)s”") % {
        "action": str(settings.get("action", "?")).capitalize(),
        "scope": scope,
        "table": _value(settings.get("table")),
    }
    node.settings = _generic(
        {name: value for name, value in settings.items() if name not in ("action", "scope", "table")}
    )


def _respond(node: Node, settings: dict) -> None:
    node.summary = _("Answers the web service caller with status %s") % settings.get("status", 200)
    node.settings = _generic({name: value for name, value in settings.items() if name != "status"})


def _set_values(node: Node, settings: dict) -> None:
    values = settings.get("values")
    node.summary = _("Sets values")
    node.settings = _generic(values if isinstance(values, dict) else {"values": values})


_DESCRIBERS = {
    "condition": _condition,
    "delay": _delay,
    "http_request": _http_request,
    "lookup_rows": _lookup_rows,
    "respond": _respond,
    "set_values": _set_values,
}


def _generic(settings: dict) -> list[tuple[str, str]]:
    """Each setting as (name, readable value): text as is, anything else as JSON; secrets masked; long values cut."""
    return [(str(name), MASK if _SECRET_NAME.search(str(name)) else _value(value)) for name, value in settings.items()]


def _url(value):
    """A URL with its password, and the values of its query parameters named as secrets are, masked."""
    if not isinstance(value, str):
        return value
    value = _URL_PASSWORD.sub(lambda match: f"{match[1]}:{MASK}@", value, count=1)
    return _QUERY_PAIR.sub(lambda match: f"{match[1]}={MASK}" if _SECRET_NAME.search(match[1]) else match[0], value)


def _value(value) -> str:
    """A setting as its owner reads it: text as it is, anything else as indented JSON. Past MAX_VALUE_CHARS, JSON is
    cut after its last whole line, never inside a number or a name, and "…" says that more followed."""
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"
    text = json.dumps(_masked(value), ensure_ascii=False, indent=2 if isinstance(value, dict | list) else None)
    if len(text) <= MAX_VALUE_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_VALUE_CHARS)
    return (text[:cut] if cut > 0 else text[:MAX_VALUE_CHARS]) + "\n…"


def other_owners(*, user, automation_uuid: str) -> Automation | None:
    """For staff only: the automation of that uuid when it is another account's, to say where staff see it."""
    parsed = parse_uuid(automation_uuid)
    if parsed is None or not getattr(user, "is_staff", False):
        return None
    return Automation.objects.filter(uuid=parsed).exclude(owner=user).first()


def _masked(value):
    if isinstance(value, dict):
        return {name: MASK if _SECRET_NAME.search(str(name)) else _masked(inner) for name, inner in value.items()}
    if isinstance(value, list):
        return [_masked(inner) for inner in value]
    return value
