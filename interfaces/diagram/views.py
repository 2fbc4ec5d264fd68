"""The automation diagram page: signed-in owners only; anyone else, and any unknown uuid, gets the same 404."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from interfaces.diagram import drawing
from interfaces.pages import unavailable


@require_safe
@never_cache
@login_required
def automation_diagram(request: HttpRequest) -> HttpResponse:
    """/automation?uuid=<automation uuid>: the trigger and steps, with the latest run's state of each."""
    automation = drawing.automation_of(user=request.user, automation_uuid=request.GET.get("uuid", ""))
    if automation is None:
        if theirs := drawing.other_owners(user=request.user, automation_uuid=request.GET.get("uuid", "")):
            # Staff are told whose it is and where they see it; the diagram stays its owner's page.
            return render(request, "interfaces/diagram_not_yours.html", {"automation": theirs}, status=404)
        return unavailable(request, "page")
    return render(request, "interfaces/diagram.html", {"diagram": drawing.build(automation)})
