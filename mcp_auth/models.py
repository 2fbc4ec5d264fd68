"""The "MCP Tools" permission: staff grant it in admin to the users who may connect AI agents.

Access tokens, grants and clients are django-oauth-toolkit's own models (not
swapped): its AccessToken and RefreshToken carry the RFC 8707 `resource`
that binds a token to this MCP server.
"""

from django.db import models

MCP_TOOLS_PERMISSION = "mcp_auth.use_mcp_tools"


class McpAccess(models.Model):
    """Holds no rows: it exists so that the permission has a content type to belong to."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("use_mcp_tools", "MCP Tools")]
