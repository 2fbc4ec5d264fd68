"""The "MCP Tools" permission, the staff-editable allow list of app callbacks, and each registered client's record.

Access tokens, grants and clients are django-oauth-toolkit's own models (not
swapped): its AccessToken and RefreshToken carry the RFC 8707 `resource`
that binds a token to this MCP server.
"""

from django.conf import settings
from django.db import models

MCP_TOOLS_PERMISSION = "mcp_auth.use_mcp_tools"


class McpAccess(models.Model):
    """Holds no rows: it exists so that the permission has a content type to belong to."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("use_mcp_tools", "MCP Tools")]


class AppCallback(models.Model):
    """A redirect URI of an app's own scheme (cursor://...) that clients may register, matched exactly.

    https and loopback http callbacks need no entry (mcp_auth/redirect_uris.py);
    a desktop app whose callback is a URL of its own scheme does.
    """

    uri = models.CharField("callback URI", max_length=500, unique=True)
    app_name = models.CharField("app", max_length=100, blank=True, help_text="Who uses it, such as Cursor.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["uri"]
        verbose_name = "app callback"

    def __str__(self) -> str:
        return self.uri

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        from mcp_auth.redirect_uris import app_callback_problem

        if problem := app_callback_problem(self.uri):
            raise ValidationError({"uri": problem})


class RegisteredClient(models.Model):
    """What dynamic registration (RFC 7591) knows of a client beyond django-oauth-toolkit's Application.

    first_token_at stays empty until the client obtains its first token:
    clients that never do are deleted a day after registering.
    """

    class AuthMethod(models.TextChoices):
        NONE = "none", "none (public client, PKCE only)"
        CLIENT_SECRET_POST = "client_secret_post", "client_secret_post"
        CLIENT_SECRET_BASIC = "client_secret_basic", "client_secret_basic"

    application = models.OneToOneField(
        "oauth2_provider.Application", on_delete=models.CASCADE, related_name="registration"
    )
    token_endpoint_auth_method = models.CharField(max_length=32, choices=AuthMethod.choices)
    registered_at = models.DateTimeField(auto_now_add=True, db_index=True)
    registered_from = models.GenericIPAddressField(null=True, blank=True)
    first_token_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "client registration"

    def __str__(self) -> str:
        return f"registration of {self.application_id}"


class SpentCode(models.Model):
    """An authorization code already exchanged, as its SHA-256, with the family of the tokens it gave.

    django-oauth-toolkit deletes a grant once its code is exchanged, which
    forgets which tokens it gave; this row remembers them for a day so that a
    second use can revoke them (mcp_auth/spent_codes.py).
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    token_family = models.UUIDField(null=True)
    spent_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = "spent authorization code"

    def __str__(self) -> str:
        return f"code spent at {self.spent_at:%Y-%m-%d %H:%M:%S}"


class ConnectedClient(models.Model):
    """When a user connected a client, and when the client last used the MCP server for them.

    connected_at is the code exchange that started the connection (a later
    approval while it is still connected keeps the date); it is empty for
    tokens not issued through the consent page (made in admin or a shell).
    last_used_at is written at most once a minute per token in each process
    (mcp_auth/connections.py record_use). Whether a client is connected is
    told by its live tokens, never by this row.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    application = models.ForeignKey("oauth2_provider.Application", on_delete=models.CASCADE, related_name="+")
    connected_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "connected client"
        constraints = [models.UniqueConstraint(fields=["user", "application"], name="one_connection_per_client")]

    def __str__(self) -> str:
        return f"client {self.application_id} of user {self.user_id}"
