"""App config of mcp_auth: the OAuth 2.1 server, discovery metadata and the MCP endpoint."""

from django.apps import AppConfig
from django.db.models.signals import post_delete


class McpAuthConfig(AppConfig):
    name = "mcp_auth"
    verbose_name = "MCP and OAuth"

    def ready(self) -> None:
        from oauth2_provider.models import get_access_token_model

        from mcp_auth import revocations

        post_delete.connect(
            revocations.access_token_deleted, sender=get_access_token_model(), dispatch_uid="mcp_auth.revocations"
        )
