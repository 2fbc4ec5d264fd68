"""Paths of a white-label domain: only the form trigger and chat widget pages."""

from django.urls import include, path

urlpatterns = [
    path("", include("interfaces.urls_whitelabel")),
]
