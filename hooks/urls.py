"""Paths of the webhook and web service URLs (HOOKS_URL)."""

from django.urls import re_path

from hooks import views

# The key part takes any characters, so that a malformed key gets the same 404 as an unknown one.
urlpatterns = [
    re_path(r"^automation-(?P<key>[^/]+)$", views.webhook_elsewhere),
    re_path(r"^webhook/automation-(?P<key>[^/]+)$", views.webhook_elsewhere),
    re_path(r"^webservice-(?P<key>[^/]+)$", views.web_service),
    # A connection's URL and an app's shared endpoint: webhooks too (hooks/asgi.py).
    re_path(r"^(?:connection|app)-", views.webhook_elsewhere),
    # Empty, extended or slashed keys: the same answer as any other miss.
    re_path(r"^(?:webhook/)?automation-", views.webhook_elsewhere),
    re_path(r"^webservice-", views.web_service),
]
