"""App config of mcp_auth: the OAuth 2.1 server, discovery metadata and the MCP endpoint."""

from django.apps import AppConfig


class McpAuthConfig(AppConfig):
    name = "mcp_auth"
    verbose_name = "MCP and OAuth"
