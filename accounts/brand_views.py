"""/account/brand: the owner's white-label domain, the name and logo its pages show, and the DNS record it needs.

Each view parses, calls one rule of interfaces/whitelabel/services.py for
the signed-in owner alone, and answers; a change is a POST with CSRF that
redirects back, its outcome shown once as a message.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from accounts.forms import BrandForm
from interfaces.whitelabel import selectors, services
from interfaces.whitelabel.views import logo_response


@never_cache
@login_required
def brand(request: HttpRequest) -> HttpResponse:
    """GET: the settings, with the DNS record the domain needs. POST: save them, or show each error by its field."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    current = selectors.domain_of(request.user)
    if request.method != "POST":
        initial = {"domain": current.domain, "name": current.name} if current else {}
        return _page(request, BrandForm(initial=initial), current)
    form = BrandForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            services.save_domain(
                owner=request.user,
                domain=form.cleaned_data["domain"],
                name=form.cleaned_data["name"],
                logo=form.cleaned_data["logo"],
            )
        except ValidationError as invalid:
            for field, errors in invalid.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, _("Saved. Your domain shows this name and logo within a few seconds."))
            return redirect("account-brand")
    return _page(request, form, current, status=400)


def _page(request, form: BrandForm, current, status: int = 200) -> HttpResponse:
    context = {
        "form": form,
        "current": current,
        "dns_host": current.domain.split(":")[0] if current else "",
        "dns_target": urlsplit(settings.BASE_URL).hostname,
    }
    return render(request, "accounts/brand.html", context, status=status)


@require_POST
@login_required
def remove_logo(request: HttpRequest) -> HttpResponse:
    if services.set_logo(owner=request.user, logo=None):
        messages.success(request, _("The logo is removed."))
    return redirect("account-brand")


@require_POST
@login_required
def remove_domain(request: HttpRequest) -> HttpResponse:
    """The domain stops serving at once; its form and chat URLs are issued on the service's host again."""
    if services.remove_domain(owner=request.user):
        messages.success(request, _("The domain is removed. Your form and chat URLs are on this service again."))
    return redirect("account-brand")


@require_safe
@login_required
def logo(request: HttpRequest) -> HttpResponse:
    """The owner's own logo, for the preview on their page: anyone else's is never served here."""
    found = selectors.logo_of(request.user.pk)
    if found is None:
        raise Http404()
    return logo_response(request, found, "private, no-cache")
