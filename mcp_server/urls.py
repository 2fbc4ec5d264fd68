"""Paths of MCP_URL this app serves: the MCP endpoint and its protected-resource metadata (SPEC 4.4, RFC 9728)."""

from django.urls import path

from mcp_server import views

urlpatterns = [
    path("mcp", views.endpoint, name="mcp"),  # no trailing slash, and /mcp/ is not redirected (APPEND_SLASH off)
    path(".well-known/oauth-protected-resource", views.protected_resource, name="oauth-protected-resource"),
    path(
        ".well-known/oauth-protected-resource/mcp",
        views.protected_resource_mcp,
        name="oauth-protected-resource-mcp",
    ),
]
