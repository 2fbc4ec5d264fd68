"""Paths of BASE_URL: home, sign-up, docs, catalog feed, interfaces, sign-in, OAuth server and admin."""

from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.urls import include, path

from accounts.sign_in import sign_in, throttled
from accounts.views import doc, home, signup
from edge.health import health

urlpatterns = [
    path("", home, name="home"),
    path("signup", signup, name="signup"),
    path("docs/<str:name>", doc, name="doc"),
    path("catalog/v1/", include("catalog.urls")),
    path("", include("accounts.urls_agents")),
    path("login", sign_in, name="login"),
    path("logout", LogoutView.as_view(), name="logout"),  # POST with CSRF only (Django 5)
    path("admin/login/", throttled(admin.site.login)),  # before admin's own, which it stands in for
    path("admin/", admin.site.urls),
    path("", include("interfaces.urls")),
    path("", include("mcp_auth.urls_base")),
    path("healthz", health, name="health"),
]
