"""Connection: an owner's connected account on a catalog app, its credential sealed (docs/connections.md)."""

from django.conf import settings
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
        # The oauth_v2 flow adds its states here (an authorization begun and not finished, a refresh that failed).

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

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_checked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["app__name", "label", "pk"]
        indexes = [models.Index(fields=["owner", "app"])]

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
