"""Paths of MCP_URL: the MCP endpoint and its protected-resource metadata."""

from django.urls import include, path

from config.views import health

urlpatterns = [
    path("", include("mcp_auth.urls_mcp")),
    path("healthz", health),
]
