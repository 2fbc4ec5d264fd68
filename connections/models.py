"""Connection: an owner's connected account on a catalog app, its credential sealed (docs/connections.md)."""

from django.conf import settings
from django.contrib.contenttypes.fields import GenericRelation
from django.db import models


class Connection(models.Model):
    """One owner's account on one app, as the app's auth_type connects it.

    auth_type is copied from the app when connecting: a catalog edit that
    changes the app's auth_type leaves the connection as it was made, and the
    owner reconnects to follow it. The credential is sealed (connections/keys.py)
    and never leaves this row in clear except to call the app.
    """

    class State(models.TextChoices):
        CONNECTED = "connected", "Connected"
        NEEDS_RECONNECTION = "needs_reconnection", "Needs reconnection"
        # An oauth_v2 authorization begun and not finished is no state: it lives in the owner's session until the
        # callback, and a connection row exists only once the app gave tokens (docs/connections.md).

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="app_connections")
    # PROTECT: catalog apps are retired, not deleted (SPEC 3); deleting one that still has connections is refused.
    app = models.ForeignKey("catalog.App", on_delete=models.PROTECT, related_name="connections")
    label = models.CharField(max_length=200, help_text="The owner's name for this account, such as “Sales team”.")
    auth_type = models.CharField(max_length=40, help_text="The app's auth_type when it was connected.")
    state = models.CharField(max_length=30, choices=State.choices, default=State.CONNECTED)
    problem = models.CharField(
        max_length=500, blank=True, help_text="Why it needs reconnection, in words the owner reads."
    )
    credential_sealed = models.TextField(blank=True, editable=False)
    credential_hint = models.CharField(max_length=40, blank=True, editable=False)
    # oauth_v2: credential_sealed holds the access token; the refresh token is sealed here under the same keys.
    refresh_sealed = models.TextField(blank=True, default="", editable=False)
    token_expires_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the access token expires, as the app said."
    )
    # Who this account is at the app, read from the test call's answer (the app's auth_config routing.account_path)
    # when connecting: a shared endpoint routes a delivery naming it here. Never typed by the owner, who could
    # otherwise claim another account's deliveries (docs/connections.md).
    account_id = models.CharField(max_length=255, blank=True, editable=False)
    # Its per-connection webhook URL's key (publickeys), deleted with it.
    public_keys = GenericRelation("publickeys.PublicKey", content_type_field="target_type", object_id_field="target_id")

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_checked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["app__name", "label", "pk"]
        indexes = [
            models.Index(fields=["owner", "app"]),
            models.Index(fields=["app", "account_id"], condition=~models.Q(account_id=""), name="connection_account"),
        ]

    def __str__(self) -> str:
        return f"{self.app} · {self.label}"


class Registration(models.Model):
    """A webhook this service created in another app for a self-registering trigger (docs/connections.md).

    Kept until the app confirms its removal, so that a removal that failed
    can be tried again: the automation is SET_NULL (a deleted automation
    leaves the record for the cleanup), and the connection and operation
    too (a record without them cannot be removed any more, and says so).
    The URL registered is kept only as its SHA-256 digest: a URL key is a
    password and appears in no other column.
    """

    class State(models.TextChoices):
        ACTIVE = "active", "Active"
        REMOVING = "removing", "Removing"
        REMOVAL_FAILED = "removal_failed", "Removal failed"
        REMOVED = "removed", "Removed"

    automation = models.ForeignKey(
        "automations.Automation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    connection = models.ForeignKey(Connection, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    operation = models.ForeignKey(
        "catalog.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    url_digest = models.CharField(max_length=64, help_text="SHA-256 of the webhook URL registered, never the URL.")
    remote_id = models.CharField(max_length=200, help_text="The app's id of the registration, from its answer.")
    state = models.CharField(max_length=20, choices=State.choices, default=State.ACTIVE)
    attempts = models.PositiveIntegerField(default=0, help_text="Removals tried.")
    next_try_at = models.DateTimeField(
        null=True, blank=True, help_text="Removing: until when a removal under way holds it; failed: the next try."
    )
    last_error = models.CharField(max_length=500, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["automation", "state"]),
            models.Index(fields=["state", "next_try_at"]),
        ]

    def __str__(self) -> str:
        return f"registration {self.pk} ({self.state})"
