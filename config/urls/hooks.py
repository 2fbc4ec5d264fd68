"""Paths of HOOKS_URL: webhook and web service URLs."""

from django.urls import include, path

from config.views import health

urlpatterns = [
    path("", include("hooks.urls")),
    path("healthz", health),
]
