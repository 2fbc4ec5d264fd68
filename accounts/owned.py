"""What an owner's pages read and change of their own automations: always through the owner, never by id alone.

Every lookup here takes the signed-in user: another owner's automation or
run is as one that does not exist (404), so its id reveals nothing.
"""

import json
from dataclasses import dataclass

from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

from automations import jsonsafe, selectors
from automations.models import Automation, Run
from hooks.models import Delivery, Refusal, Verification

RUNS_PER_PAGE = 50
KEPT_SHOWN = 20


def automations_of(owner):
    """The owner's automations by name, each with its latest run's id, status and start (one query)."""
    latest = Run.objects.filter(automation=OuterRef("pk")).order_by("-started_at", "-pk")
    return Automation.objects.filter(owner=owner).annotate(
        last_run_id=Subquery(latest.values("pk")[:1]),
        last_run_status=Subquery(latest.values("status")[:1]),
        last_run_at=Subquery(latest.values("started_at")[:1]),
    )


def automation_of(owner, automation_id: int) -> Automation | None:
    return Automation.objects.filter(owner=owner, pk=automation_id).first()


def run_of(owner, run_id: int) -> Run | None:
    return Run.objects.select_related("automation").filter(automation__owner=owner, pk=run_id).first()


@dataclass(frozen=True)
class RunsPage:
    runs: list[Run]
    older_than: int | None  # the run id to ask the next page with (?before=), None on the last page


def runs_page(automation: Automation, *, before: int | None = None) -> RunsPage:
    """A page of the automation's runs, newest first, after the run `before` (keyset: as fast on page 2,000 as on
    page 1, through the (automation, -started_at) index)."""
    runs = Run.objects.filter(automation=automation).order_by("-started_at", "-pk")
    runs = runs.only("pk", "status", "source", "attempt", "started_at", "finished_at")
    if before is not None:
        anchor = Run.objects.filter(automation=automation, pk=before).values_list("started_at", flat=True).first()
        if anchor is None:
            return RunsPage([], None)
        runs = runs.filter(started_at__lte=anchor).exclude(started_at=anchor, pk__gte=before)
    found = list(runs[: RUNS_PER_PAGE + 1])
    more = len(found) > RUNS_PER_PAGE
    return RunsPage(found[:RUNS_PER_PAGE], found[RUNS_PER_PAGE - 1].pk if more else None)


@dataclass(frozen=True)
class Kept:
    count: int
    oldest: list[Delivery]


def kept_deliveries(automation: Automation) -> Kept:
    """Deliveries accepted while the automation was off and not yet run: replayed in arrival order when it is on."""
    pending = Delivery.objects.filter(automation=automation, status=Delivery.Status.PENDING)
    oldest = list(pending.order_by("pk").only("public_id", "received_at", "method", "content_type")[:KEPT_SHOWN])
    return Kept(pending.count() if len(oldest) == KEPT_SHOWN else len(oldest), oldest)


REFUSALS_SHOWN = 5  # on the automation's runs page; its verification page lists every one kept


@dataclass(frozen=True)
class Verified:
    """What its webhook URL verifies, and the latest requests it refused."""

    row: Verification | None
    latest: list[Refusal]


def verification_of(automation: Automation) -> Verified:
    row = Verification.objects.filter(pk=automation.pk).first()
    latest = list(Refusal.objects.filter(automation=automation).order_by("-pk")[:REFUSALS_SHOWN]) if row else []
    return Verified(row, latest)


def document_text(automation: Automation) -> str:
    return json.dumps(selectors.document_of(automation), indent=2, ensure_ascii=False) + "\n"


class NotADocument(ValueError):
    """Text that is not a JSON document; the message says where, with the line and column."""


# Python's json module says what it expected in a small fixed set of English phrases: each said in the owner's
# language (an unknown one, from a later Python, is shown as it comes).
JSON_FAULTS = {
    "Expecting value": _("a value was expected (a string, number, object, array, true, false or null)"),
    "Expecting property name enclosed in double quotes": _(
        "a name in double quotes was expected (a comma after the last item is not allowed)"
    ),
    "Expecting ':' delimiter": _("a colon was expected after the name"),
    "Expecting ',' delimiter": _("a comma was expected between two items"),
    "Unterminated string starting at": _("a string is not closed by a double quote"),
    "Invalid \\escape": _("a backslash starts no valid escape"),
    "Invalid \\uXXXX escape": _("a \\u escape needs four hexadecimal digits"),
    "Invalid control character at": _("a control character (such as a tab or a line break) is inside a string"),
    "Extra data": _("more text follows the end of the document"),
}


def read_document(text: str):
    """The JSON value of text a person typed or uploaded, or NotADocument with the line and column of the fault.

    jsonsafe.loads refuses NaN, Infinity and nesting deeper than any definition needs.
    """
    try:
        return jsonsafe.loads(text)
    except json.JSONDecodeError as error:
        fault = JSON_FAULTS.get(error.msg, error.msg)
        where = {"line": error.lineno, "column": error.colno, "fault": fault}
        raise NotADocument(_("line %(line)d, column %(column)d: %(fault)s") % where) from None
    except (ValueError, RecursionError) as error:
        raise NotADocument(str(error) or "nested too deep") from None


def name_in(document, fallback: str = "") -> str:
    """The name a document carries ("name", as export writes it), else fallback."""
    name = document.get("name") if isinstance(document, dict) else None
    return name if isinstance(name, str) and name.strip() else fallback


def name_problem(name: str) -> str | None:
    """What is wrong with a name an owner gave, or None: the definition's schema checks a document's own."""
    longest = Automation._meta.get_field("name").max_length
    if not name.strip():
        return str(_('give it a name, in the form or as "name" in the document'))
    if len(name) > longest or jsonsafe.unstorable(name):
        return str(_("a name is text of at most %(longest)s characters") % {"longest": longest})
    return None
