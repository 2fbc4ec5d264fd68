"""Execution History for owners: an automation's runs, newest first, one run's data and steps, and its retry."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from accounts import owned
from automations import runs
from automations.models import Run
from publickeys import selectors as key_selectors


@require_safe
@never_cache
@login_required
def run_list(request: HttpRequest, automation_id: int) -> HttpResponse:
    """?before=<run id>: the page after that run (the "Older runs" link); an id that is no run of it: an empty page."""
    automation = owned.automation_of(request.user, automation_id)
    if automation is None:
        raise Http404("no such automation")
    before = request.GET.get("before", "")
    if before and not (before.isascii() and before.isdigit() and len(before) < 19):
        raise Http404("no such page")
    page = owned.runs_page(automation, before=int(before) if before else None)
    context = {
        "automation": automation,
        "page": page,
        "first_page": not before,
        "kept": owned.kept_deliveries(automation),
        "verification": owned.verification_of(automation) if not before else None,
    }
    return render(request, "accounts/runs.html", context)


@require_safe
@never_cache
@login_required
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = owned.run_of(request.user, run_id)
    if run is None:
        raise Http404("no such run")
    waiting_for = run.waiting_for or {} if run.status == Run.Status.WAITING else {}
    context = {
        "run": run,
        "automation": run.automation,
        "waiting_for": waiting_for,
        # The link a waiting run's person answers at, rendered from the key's id (never stored in clear).
        "waiting_link": key_selectors.link_of_key_id(waiting_for.get("public_key_id")) if waiting_for else None,
        "can_retry": run.status in runs.RETRIED_BY_HAND,
        "not_retried": runs.why_not_retried(run) if run.status in runs.RETRIED_BY_HAND else None,
    }
    return render(request, "accounts/run.html", context)


@require_POST
@login_required
def retry(request: HttpRequest, run_id: int) -> HttpResponse:
    run = owned.run_of(request.user, run_id)
    if run is None:
        raise Http404("no such run")
    try:
        again = runs.retry_by_hand(run_id=run.pk, automation_id=run.automation_id)
    except runs.NotRetried as refusal:
        messages.error(request, _("Not retried: %(reason)s.") % {"reason": refusal})
        return redirect("account-run", run_id=run.pk)
    if run.automation.enabled:
        messages.success(request, _("Retried: this is the new attempt."))
    else:
        messages.success(request, _("Retried: the new attempt starts when the automation is turned on."))
    return redirect("account-run", run_id=again.pk)
