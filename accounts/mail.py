"""The mails of accounts: a sign-up's confirmation link, and the notice to the owner of an address already taken."""

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode

from accounts import tokens


def _send(*, to: str, template: str, context: dict) -> None:
    context = {"base_url": settings.BASE_URL, **context}
    subject = " ".join(render_to_string(f"registration/{template}_subject.txt", context).split())
    body = render_to_string(f"registration/{template}.txt", context)
    send_mail(subject, body, None, [to])


def app_path(app_slug: str) -> str:
    """Where an account lands after signing in when its sign-up named an app: the home page, offering it."""
    return f"{reverse('home')}?app={app_slug}" if app_slug else reverse("home")


def send_confirmation(user) -> None:
    link = settings.BASE_URL + reverse("signup-confirm", args=[tokens.make_token(user)])
    _send(to=user.email, template="confirm_email", context={"link": link})


def send_taken_notice(user, *, app_slug: str = "") -> None:
    sign_in = settings.BASE_URL + reverse("login")
    if app_slug:
        sign_in += "?" + urlencode({"next": app_path(app_slug)})
    reset = settings.BASE_URL + reverse("password_reset")
    _send(to=user.email, template="signup_taken", context={"sign_in": sign_in, "reset": reset, "user": user})
