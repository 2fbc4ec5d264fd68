"""Paths of MCP_URL this app serves: the MCP endpoint and its protected-resource metadata (SPEC 4.4, RFC 9728)."""

from django.urls import path

from mcp_auth import views_mcp

urlpatterns = [
    path("mcp", views_mcp.endpoint, name="mcp"),  # no trailing slash, and /mcp/ is not redirected (APPEND_SLASH off)
    path(".well-known/oauth-protected-resource", views_mcp.protected_resource, name="oauth-protected-resource"),
    path(
        ".well-known/oauth-protected-resource/mcp",
        views_mcp.protected_resource_mcp,
        name="oauth-protected-resource-mcp",
    ),
]
