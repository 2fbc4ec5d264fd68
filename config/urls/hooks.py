"""Paths of HOOKS_URL: webhook and web service URLs."""

from django.urls import include, path

from edge.health import health

urlpatterns = [
    path("", include("hooks.urls")),
    path("healthz", health),
]
