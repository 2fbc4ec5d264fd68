"""The verification of an automation's webhook URL (/account/automations/<id>/verification): its owner sets the
signature scheme, secrets, tolerance and allow list, and sees the requests it refused (docs/webhooks.md)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables

from accounts import owned
from accounts.forms import VerificationForm
from automations import triggers
from hooks import verification
from hooks.models import Verification
from publickeys.models import PublicKey


@sensitive_variables("secret", "cleaned", "generated")
@sensitive_post_parameters("secret")
@never_cache
@login_required
def verification_page(request: HttpRequest, automation_id: int) -> HttpResponse:
    """GET: the form and the latest refusals. POST: save, then show a generated secret once (it is never shown
    again), or go back to the automation's page."""
    automation = owned.automation_of(request.user, automation_id)
    if automation is None or PublicKey.Purpose.WEBHOOK not in triggers.of(automation).URLS:
        raise Http404("no such automation")
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    current = Verification.objects.filter(pk=automation.pk).first() or Verification(automation=automation)
    initial = {
        "scheme": current.scheme,
        "tolerance_seconds": current.tolerance_seconds,
        "allowed_networks": "\n".join(current.allowed_networks),
        "keep_previous": True,
    }
    form = VerificationForm(request.POST or None, initial=initial, has_secret=bool(current.secret_sealed))
    generated = ""
    if request.method == "POST" and form.is_valid():
        cleaned = form.cleaned_data
        secret = cleaned["secret"]
        if cleaned["generate"]:
            secret = generated = verification.new_standard_secret()
        verification.save(
            automation_id=automation.pk,
            scheme=cleaned["scheme"],
            tolerance_seconds=cleaned["tolerance_seconds"],
            new_secret=secret,
            keep_previous=cleaned["keep_previous"],
            forget_previous=cleaned["forget_previous"],
            allowed_networks=cleaned["allowed_networks"],
        )
        if not generated:
            messages.success(request, _("Saved. Webhooks are verified this way within 10 seconds."))
            return redirect("account-automation", automation_id=automation.pk)
        current = Verification.objects.get(pk=automation.pk)
        form = VerificationForm(
            initial={**initial, "scheme": current.scheme, "allowed_networks": "\n".join(current.allowed_networks)},
            has_secret=True,
        )
    context = {
        "automation": automation,
        "form": form,
        "current": current,
        "generated": generated,
        "refusals": list(automation.refusals.all()[: verification.REFUSALS_KEPT]),
        "kept": verification.REFUSALS_KEPT,
    }
    return render(request, "accounts/verification.html", context, status=400 if form.errors else 200)
