"""Deliveries: every request accepted at a webhook URL, kept until a worker has turned it into its run."""

import uuid

from django.db import models


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

    # No index of its own: the composite indexes below start with it, and every index costs each webhook.
    automation = models.ForeignKey(
        "automations.Automation", on_delete=models.CASCADE, related_name="deliveries", db_index=False
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

    class Meta:
        ordering = ["pk"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["status", "received_at"]),
            models.Index(fields=["automation", "status"]),
            models.Index(fields=["automation", "body_digest"]),
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
