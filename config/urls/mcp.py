"""Paths of MCP_URL: the MCP endpoint and its protected-resource metadata."""

from django.urls import include, path

from edge.health import health

urlpatterns = [
    path("", include("mcp_server.urls")),
    path("healthz", health),
]
