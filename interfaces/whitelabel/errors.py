"""The error pages of a white-label domain (400, 403, 404, 500 and a refused CSRF check), under the account's name.

config/urls/whitelabel.py names them as its handlers, so the service's own
hosts keep Django's. A 500 page that cannot be rendered (the error was in
rendering) falls back to Django's plain one.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views import defaults
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.csrf import requires_csrf_token


def _page(request: HttpRequest, heading: str, explanation: str, status: int) -> HttpResponse:
    return render(
        request, "interfaces/white_label_error.html", {"heading": heading, "explanation": explanation}, status=status
    )


@requires_csrf_token
def bad_request(request, exception=None):
    return _page(request, _("Bad request"), _("This request could not be understood."), 400)


@requires_csrf_token
def permission_denied(request, exception=None):
    return _page(request, _("Forbidden"), _("You may not open this page."), 403)


@requires_csrf_token
def page_not_found(request, exception=None):
    return _page(request, _("Not found"), _("There is nothing here. Check the link you followed."), 404)


@requires_csrf_token
def server_error(request):
    try:
        return _page(request, _("Something went wrong"), _("Please try again in a moment."), 500)
    except Exception:
        return defaults.server_error(request)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: on a white-label domain, its own 403 page; on the service's hosts, Django's."""
    if getattr(request, "white_label_owner_id", None) is None:
        return django_csrf_failure(request, reason=reason)
    explanation = _("This page was open too long, or your browser refused its cookie. Reload it and try again.")
    return _page(request, _("The form could not be sent"), explanation, 403)
