"""Pages and JSON endpoints of interfaces: the approval queue (SPEC 4.3)."""

import ipaddress
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from edge import limits
from edge.clients import client_address
from interfaces.approvals import queues
from interfaces.approvals.queues import Outcome
from interfaces.pages import see_other, unavailable
from interfaces.typed_text import has_control_characters

OUTCOME_STATUS = {Outcome.DECIDED: 200, Outcome.ALREADY_DECIDED: 409, Outcome.CLOSED: 409, Outcome.NOT_FOUND: 404}
PAGE_DECISIONS = {"approve": "approved", "reject": "rejected"}


class DecisionForm(forms.Form):
    item = forms.IntegerField(min_value=1, max_value=2**63 - 1)
    decision = forms.ChoiceField(choices=[(name, name) for name in PAGE_DECISIONS])
    comment = forms.CharField(required=False, max_length=queues.COMMENT_LIMIT)

    def clean_comment(self):
        if has_control_characters(self.cleaned_data["comment"]):
            raise forms.ValidationError("control characters are not allowed")
        return self.cleaned_data["comment"]


def client_ip(request: HttpRequest) -> str | None:
    """The client's address as the rate limits see it (TRUSTED_PROXY_COUNT), or None when it is not an address."""
    address = client_address(request)
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def too_many(request: HttpRequest, retry_after: int) -> HttpResponse:
    response = render(request, "interfaces/too_many.html", status=429)
    response["Retry-After"] = str(retry_after)
    return response


def private(response: HttpResponse) -> HttpResponse:
    """The queue's page is the key holder's: kept out of search engines (its URL is the credential)."""
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def moderation(request: HttpRequest) -> HttpResponse:
    """The approval queue: GET and HEAD show it (link previews and mail scanners decide nothing); a POST decides."""
    if wait := limits.retry_after(request, "approvals"):
        return too_many(request, wait)
    queue = queues.queue_for_key(request.GET.get("queue", ""))
    if queue is None:
        return unavailable(request, "approval")
    notice, status = _decided_notice(queue, request.GET.get("decided", "")), 200
    if request.method == "POST":
        form = DecisionForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            outcome = queues.decide(
                queue=queue,
                item_id=data["item"],
                decision=PAGE_DECISIONS[data["decision"]],
                comment=data["comment"],
                address=client_ip(request),
            )
            if outcome is Outcome.DECIDED:  # then a GET, which a reload repeats: never "your decision was not recorded"
                query = urlencode({"queue": request.GET["queue"], "decided": data["item"]})
                return private(see_other(f"{request.path}?{query}"))
            notice = {"outcome": outcome.name.lower(), "item": queues.item_view(queue, data["item"])}
            status = OUTCOME_STATUS[outcome]
        else:
            notice, status = {"outcome": "invalid", "errors": form.errors}, 400
    pending, closed = queues.items_of(queue)
    context = {"pending": pending, "closed": closed, "notice": notice, "automation_name": queue.automation.name}
    return private(render(request, "interfaces/moderation.html", context, status=status))


def _decided_notice(queue, decided: str) -> dict | None:
    """The notice of the page a decision redirected to (?decided=<item>), if that item is decided."""
    # ASCII digits only: "²".isdigit() holds and int("²") raises; 18 of them always fit a primary key.
    item = (
        queues.item_view(queue, int(decided)) if decided.isascii() and decided.isdigit() and len(decided) < 19 else None
    )
    return {"outcome": "decided", "item": item} if item and item.state in PAGE_DECISIONS.values() else None
