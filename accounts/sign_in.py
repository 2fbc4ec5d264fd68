"""Sign-in throttling: password attempts counted per client IP and per user name (django-ratelimit).

Every sign-in POST counts, in the shared cache (Redis in production), against
two limits (edge/limits.py): SIGN_IN_RATE_IP per client address (edge.clients.client_key:
TRUSTED_PROXY_COUNT, IPv6 per /64) and SIGN_IN_RATE_USERNAME per user name,
folded to lower case. Past either, the attempt is refused with 429 before the
password is checked, so it tells a guesser nothing. The price of the per-name
limit: someone guessing at a name locks its owner out until the window ends.

/login (SignInView) is Django's LoginView in the pages' look, asking for the
email address (accounts/backends.py), behind the same limits, counted in the
same groups as admin's sign-in (one password, one budget); its refusal is a
page. Its ?next= is followed only when it is a path of this site (/form/...,
not //other.example or https://...).

A counter that cannot be reached lets the attempt through
(edge/limits.py): admin holds the maintenance switch, which an
outage of Redis must not lock.
"""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.forms import SignInForm
from edge import limits


def throttled(view, *, page: str | None = None):
    """Wrap a sign-in view: its POSTs past either limit get 429 with Retry-After (the template page, or plain text)."""

    @wraps(view)
    def throttled_view(request: HttpRequest, *args, **kwargs):
        if request.method == "POST":
            username = request.POST.get("username", "").strip().lower()
            if wait := limits.retry_after(request, "sign-in attempt", username=username):
                return refused(wait, request=request, page=page)
        return view(request, *args, **kwargs)

    return throttled_view


def refused(retry_after: int, *, request: HttpRequest | None = None, page: str | None = None) -> HttpResponse:
    if page and request is not None:
        response = render(request, page, {"retry_minutes": max(1, (retry_after + 59) // 60)}, status=429)
    else:
        response = HttpResponse("too many sign-in attempts; try again later\n", status=429, content_type="text/plain")
    response["Retry-After"] = str(max(1, retry_after))
    return response


def is_local_path(url: str) -> bool:
    """True for a path of this site ("/form/run/abc?x=1"); false for any URL naming a scheme or a host.

    Browsers read "//host", "/\\host" and "/\thost" as other sites; a path
    that starts with one "/" followed by anything else stays here.
    """
    if not url.startswith("/") or url.startswith(("//", "/\\")):
        return False
    if any(ord(char) < 32 or char == "\\" for char in url):
        return False
    return url_has_allowed_host_and_scheme(url, allowed_hosts=set(), require_https=False)


class SignInView(LoginView):
    """/login: ?next= (or the posted next) is followed only when it is a path of this site, else LOGIN_REDIRECT_URL.

    An unconfirmed account's owner (the right password) is told to confirm, with a link to send it again.
    """

    template_name = "registration/login.html"
    form_class = SignInForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        form = context["form"]
        context["unconfirmed"] = form.is_bound and form.has_error(NON_FIELD_ERRORS, "unconfirmed")
        context["signup_open"] = settings.SIGNUP_OPEN
        return context

    def get_redirect_url(self) -> str:
        url = self.request.POST.get(self.redirect_field_name, self.request.GET.get(self.redirect_field_name, ""))
        return url if is_local_path(url) else ""


sign_in = throttled(SignInView.as_view(), page="registration/too_many_attempts.html")
