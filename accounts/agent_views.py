"""/account/agents: the AI agents a signed-in person connected to the MCP server, and disconnecting one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from accounts import agents as rules
from interfaces.pages import unavailable


@require_safe
@never_cache
@login_required
def agent_list(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/agents.html", {"agents": rules.agents_of(user=request.user)})


@login_required
@require_POST
def disconnect(request: HttpRequest, agent_id: int) -> HttpResponse:
    """POST with the CSRF token; another person's client, or no client, is 404, as the page never listed it."""
    outcome, agent = rules.disconnect(user=request.user, agent_id=agent_id)
    if outcome is rules.Outcome.NOT_FOUND:
        return unavailable(request, "page")
    if outcome is rules.Outcome.DISCONNECTED:
        name = agent.name or _("An unnamed client")
        messages.success(request, _("%(name)s is disconnected: its tokens no longer work.") % {"name": name})
    else:
        messages.info(request, _("That agent was already disconnected."))
    return redirect("agents", permanent=False)
