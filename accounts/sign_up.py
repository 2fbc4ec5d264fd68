"""/signup, its emailed confirmation link and the link sent again; Django's password reset behind the same limit.

Sign-up is open when the operator sets SIGNUP_OPEN; closed, /signup says how to
get an account. Every POST that may mail an address (sign-up, resend, password
reset) is counted per client and per address ("account mail", edge/limits.py)
before its form is read: past either, 429 with Retry-After. Decisions:
docs/accounts.md.
"""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts import mail, selectors, services
from accounts.forms import EmailForm, SignUpForm
from catalog.models import is_slug
from catalog.selectors import connectable_apps
from edge import limits


def mail_limited(view):
    """Refuse a view's POSTs past the "account mail" limits with a 429 page, before its form is read."""

    @wraps(view)
    def limited_view(request: HttpRequest, *args, **kwargs):
        if request.method == "POST":
            address = selectors.normalize_email(request.POST.get("email", ""))
            if wait := limits.retry_after(request, "account mail", address=address):
                minutes = max(1, (wait + 59) // 60)
                response = render(request, "registration/too_many_mails.html", {"minutes": minutes}, status=429)
                response["Retry-After"] = str(wait)
                return response
        return view(request, *args, **kwargs)

    return limited_view


def _connectable_app(slug: str):
    return connectable_apps().filter(slug=slug).first() if is_slug(slug) else None


@require_http_methods(["GET", "HEAD", "POST"])
@mail_limited
def signup(request: HttpRequest) -> HttpResponse:
    """The feed's connect_url ({base_url}/signup?app={slug}): a sign-up naming the app, or how to get an account."""
    slug = (request.POST if request.method == "POST" else request.GET).get("app", "")
    app = _connectable_app(slug)
    if request.user.is_authenticated:
        return redirect(mail.app_path(app.slug if app else ""))
    context = {"app": app, "slug": slug, "signup_open": settings.SIGNUP_OPEN}
    unknown_app = 404 if slug and app is None else 200
    if not settings.SIGNUP_OPEN:
        return render(request, "signup.html", context, status=403 if request.method == "POST" else unknown_app)
    if request.method == "POST":
        form = SignUpForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            services.sign_up(email=data["email"], password=data["password"], app_slug=app.slug if app else "")
            return redirect("signup-sent")
        unknown_app = 200
    else:
        form = SignUpForm(initial={"app": app.slug if app else ""})
    return render(request, "signup.html", {**context, "form": form}, status=unknown_app)


@require_http_methods(["GET", "HEAD"])
def signup_sent(request: HttpRequest) -> HttpResponse:
    """The "check your inbox" page: the one answer of every sign-up and resend, whatever the address."""
    return render(request, "registration/signup_sent.html")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows a button, so that a mail scanner opening the link does not use it; its POST confirms once."""
    signup = selectors.pending_signup_for_token(token)
    if signup is None or (request.method == "POST" and not services.confirm_email(signup=signup)):
        return render(request, "registration/confirm_invalid.html", status=404)
    if request.method == "POST":
        messages.success(request, _("Your email address is confirmed. Sign in to start."))
        return redirect(f"{reverse('login')}?{urlencode({'next': mail.app_path(signup.app_slug)})}")
    return render(request, "registration/confirm.html", {"email": signup.user.email})


@require_http_methods(["GET", "HEAD", "POST"])
@mail_limited
def resend(request: HttpRequest) -> HttpResponse:
    """Send the confirmation link again; the answer is "check your inbox" whether or not a mail was sent."""
    form = EmailForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        services.send_confirmation_again(email=form.cleaned_data["email"])
        return redirect("signup-sent")
    return render(request, "registration/resend.html", {"form": form})


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset; its mail links to BASE_URL, not to whatever Host the request named."""

    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"

    def form_valid(self, form):
        self.extra_email_context = {"base_url": settings.BASE_URL}
        return super().form_valid(form)


password_reset = mail_limited(PasswordResetView.as_view())
