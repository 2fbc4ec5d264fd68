"""Deliveries: every request accepted at a webhook URL, kept until a worker has turned it into its run; and what a
webhook URL verifies, with the requests it refused."""

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from catalog.models import App
from hooks import signatures


class Delivery(models.Model):
    """One accepted webhook request (DESIGN.md contract 1: stored before the 200 goes out).

    A worker turns it into its run in one transaction (hooks/deliveries.py):
    from then on the run is what is claimed, leased, retried and swept, and
    the delivery is done. Nothing holds a pending delivery: a worker lost
    while turning it rolls back, and the sweeper queues it again.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending (queued, or kept while off)"
        DONE = "done", "done (its run is in Execution History)"
        FAILED = "failed", "failed (its run could not be started)"
        SUPPRESSED = "suppressed", "suppressed duplicate"
        UNMATCHED = "unmatched", "unmatched (no connection or automation takes it: see its error)"

    # Whose delivery it is: an automation's (its webhook URL, or a copy fanned out to it), or else a connection's
    # (its per-connection URL) or an app's (its shared endpoint), which a worker fans out to automations
    # (docs/connections.md, "App triggers: per connected account and shared endpoint").
    # No index of its own: the composite indexes below start with it, and every index costs each webhook.
    automation = models.ForeignKey(
        "automations.Automation",
        on_delete=models.CASCADE,
        related_name="deliveries",
        db_index=False,
        null=True,
        blank=True,
    )
    # Partial indexes below: a generic webhook's row (both null) is in neither, and costs neither anything.
    connection = models.ForeignKey(
        "connections.Connection",
        on_delete=models.CASCADE,
        related_name="deliveries",
        db_index=False,
        null=True,
        blank=True,
        help_text="The connection it came for (its URL, or the shared endpoint's routing), or was fanned out from.",
    )
    app = models.ForeignKey(
        "catalog.App",
        on_delete=models.CASCADE,
        related_name="deliveries",
        db_index=False,
        null=True,
        blank=True,
        help_text="The app whose shared endpoint received it.",
    )
    account = models.CharField(
        max_length=255,
        blank=True,
        db_default="",
        help_text="At a shared endpoint: the account its routing header named (a body path is read by the worker).",
    )
    public_id = models.UUIDField(
        "public ID", default=uuid.uuid4, unique=True, editable=False, help_text="Sent as X-Flowgate-Delivery-Id."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2048)
    query_string = models.TextField(blank=True)
    content_type = models.CharField(max_length=255, blank=True)
    body = models.BinaryField()
    body_digest = models.CharField(max_length=64, help_text="SHA-256 of the body, for duplicate suppression.")
    received_at = models.DateTimeField(auto_now_add=True)
    run = models.ForeignKey(
        "automations.Run",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The run it became: its first attempt (a retry is a run of its own, with the next attempt).",
    )
    error = models.TextField(blank=True, db_default="", help_text="Why no run could be started, when none was.")
    suppressed_by = models.ForeignKey(
        "automations.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="suppressed_deliveries"
    )
    # A signed delivery's replay id (hooks/signatures.py: a digest of its webhook-id, or of Stripe's signed time and
    # body): the unique index refuses a second delivery with it, in the INSERT that stores it (hooks/statements.py).
    replay_id = models.CharField(max_length=64, null=True, blank=True, editable=False)

    class Meta:
        ordering = ["pk"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["status", "received_at"]),
            models.Index(fields=["automation", "status"]),
            models.Index(fields=["automation", "body_digest"]),
            models.Index(
                fields=["connection"], condition=models.Q(connection__isnull=False), name="delivery_connection"
            ),
            models.Index(fields=["app"], condition=models.Q(app__isnull=False), name="delivery_app"),
        ]
        constraints = [
            # Partial: an unsigned delivery (replay_id null) costs it nothing.
            models.UniqueConstraint(
                fields=["automation", "replay_id"],
                condition=models.Q(replay_id__isnull=False),
                name="one_delivery_per_replay_id",
            ),
        ]

    def __str__(self) -> str:
        return f"delivery {self.public_id} ({self.status})"


class Maintenance(models.Model):
    """The admin switch that puts webhook and web service URLs in maintenance (503); one row."""

    active = models.BooleanField(default=False)
    note = models.CharField(max_length=200, blank=True, help_text="For staff; never shown to callers.")
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = verbose_name_plural = "maintenance switch"

    def __str__(self) -> str:
        return "maintenance on" if self.active else "maintenance off"


class Verification(models.Model):
    """What an automation's webhook URL verifies before it accepts a request (docs/webhooks.md, "Verified webhook
    URLs"): a signature scheme with its secrets, and an allow list of addresses. No row: nothing is verified.

    The secrets are passwords: sealed (hooks/verification.py), never shown
    back after saving (only a hint), never exported with the automation's
    document.
    """

    class Scheme(models.TextChoices):
        NONE = "", _("None")
        STANDARD = signatures.STANDARD, _("Standard Webhooks (webhook-signature)")
        GITHUB = signatures.GITHUB, _("GitHub (X-Hub-Signature-256)")
        STRIPE = signatures.STRIPE, _("Stripe (Stripe-Signature)")

    automation = models.OneToOneField(
        "automations.Automation", on_delete=models.CASCADE, primary_key=True, related_name="verification"
    )
    scheme = models.CharField(max_length=20, choices=Scheme.choices, blank=True)
    tolerance_seconds = models.PositiveIntegerField(default=300)
    secret_sealed = models.TextField(blank=True, editable=False)
    secret_hint = models.CharField(max_length=40, blank=True, editable=False)
    # The secret before the last change, still accepted while senders move to the new one (rotation).
    previous_sealed = models.TextField(blank=True, editable=False)
    previous_hint = models.CharField(max_length=40, blank=True, editable=False)
    allowed_networks = models.JSONField(default=list, blank=True, help_text="CIDR networks; empty: every address.")
    refused_count = models.PositiveBigIntegerField(default=0, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"verification of automation {self.automation_id}"


class Refusal(models.Model):
    """A request a webhook URL's verification refused (401 or 403): recorded for its owner and staff, never run.

    Only the latest REFUSALS_KEPT per automation are kept (the total is
    Verification.refused_count), so that refused requests cannot fill the
    database; no body and no header is kept.
    """

    class Reason(models.TextChoices):
        SIGNATURE = signatures.SIGNATURE, _("signature did not match")
        MALFORMED = signatures.MALFORMED, _("signature headers missing or malformed")
        TIMESTAMP = signatures.TIMESTAMP, _("timestamp outside tolerance")
        REPLAYED = signatures.REPLAYED, _("webhook-id already seen")
        ADDRESS = signatures.ADDRESS, _("address not allowed")
        UNREADABLE = signatures.UNREADABLE, _("secret unreadable: set it again")

    automation = models.ForeignKey(
        "automations.Automation", on_delete=models.CASCADE, related_name="refusals", db_index=False
    )
    reason = models.CharField(max_length=20, choices=Reason.choices)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2048, help_text="Its key replaced by {key}.")
    client_address = models.CharField(max_length=64, blank=True)
    body_size = models.PositiveBigIntegerField(default=0)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["automation", "-id"])]

    def __str__(self) -> str:
        return f"refused: {self.get_reason_display()}"


class SharedEndpoint(App):
    """A catalog app seen by its shared callback URL (hooks/endpoints.py): staff read and register it here, where the
    app's deliveries are, without the catalog knowing of webhooks."""

    class Meta:
        proxy = True
        verbose_name = "shared endpoint"
