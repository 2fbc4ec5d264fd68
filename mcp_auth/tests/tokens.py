"""Access tokens made the way the authorization server stores them: django-oauth-toolkit's own models, no mocks."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import Permission
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from mcp_auth.models import MCP_TOOLS_PERMISSION

ALL_SCOPES = "mcp:tools mcp:automation_builder"


def grant_mcp_tools(user) -> None:
    app_label, codename = MCP_TOOLS_PERMISSION.split(".")
    user.user_permissions.add(Permission.objects.get(codename=codename, content_type__app_label=app_label))


def issue_token(
    user,
    *,
    scope: str = "mcp:tools",
    resource: list[str] | None = None,
    expires_in: timedelta = timedelta(hours=1),
) -> tuple[str, AccessToken]:
    """A fresh token for user, bound to MCP_URL/mcp unless resource says otherwise; returns (raw token, row)."""
    application = Application.objects.create(
        name="An MCP client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:33418/callback",
        user=None,
    )
    raw = secrets.token_urlsafe(32)
    row = AccessToken.objects.create(
        user=user,
        application=application,
        token=raw,
        expires=timezone.now() + expires_in,
        scope=scope,
        resource=[settings.MCP_URL + "/mcp"] if resource is None else resource,
    )
    return raw, row
