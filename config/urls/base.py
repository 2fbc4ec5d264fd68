"""Paths of BASE_URL: home, sign-up, password reset, docs, catalog feed, interfaces, sign-in, OAuth server and admin."""

from django.contrib import admin
from django.contrib.auth.views import (
    LogoutView,
    PasswordResetCompleteView,
    PasswordResetConfirmView,
    PasswordResetDoneView,
)
from django.urls import include, path

from accounts import sign_up
from accounts.forms import NewPasswordForm
from accounts.sign_in import sign_in, throttled
from accounts.views import doc, home
from edge.health import health

urlpatterns = [
    path("", home, name="home"),
    path("signup", sign_up.signup, name="signup"),
    path("signup/sent", sign_up.signup_sent, name="signup-sent"),
    path("signup/confirm/<str:token>", sign_up.confirm, name="signup-confirm"),
    path("signup/resend", sign_up.resend, name="signup-resend"),
    path("password-reset", sign_up.password_reset, name="password_reset"),
    path("password-reset/sent", PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password-reset/<uidb64>/<token>",
        PasswordResetConfirmView.as_view(form_class=NewPasswordForm),
        name="password_reset_confirm",
    ),
    path("password-reset/done", PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("docs/<str:name>", doc, name="doc"),
    path("catalog/v1/", include("catalog.urls")),
    path("account/", include("accounts.urls")),
    path("login", sign_in, name="login"),
    path("logout", LogoutView.as_view(), name="logout"),  # POST with CSRF only (Django 5)
    path("admin/login/", throttled(admin.site.login)),  # before admin's own, which it stands in for
    path("admin/", admin.site.urls),
    path("", include("interfaces.urls")),
    path("", include("mcp_auth.urls_base")),
    path("healthz", health, name="health"),
]
