"""Deliveries: every request accepted at a webhook URL, kept until its run has completed."""

import uuid

from django.db import models


class Delivery(models.Model):
    """One accepted webhook request (DESIGN.md contract 1: stored before the 200 goes out)."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending (queued, kept while off, or waiting for a retry)"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed", "failed (retries used up)"
        SUPPRESSED = "suppressed", "suppressed duplicate"

    # No index of its own: the composite indexes below start with it, and every index costs each webhook.
    automation = models.ForeignKey(
        "automations.Automation", on_delete=models.CASCADE, related_name="deliveries", db_index=False
    )
    public_id = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False, help_text="Sent as X-Flowgate-Delivery-Id."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2048)
    query_string = models.TextField(blank=True)
    content_type = models.CharField(max_length=255, blank=True)
    body = models.BinaryField()
    body_digest = models.CharField(max_length=64, help_text="SHA-256 of the body, for duplicate suppression.")
    received_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=0)
    not_before = models.DateTimeField(null=True, blank=True, help_text="A pending retry waits until then.")
    # A worker's claim: who holds the delivery and until when (past it, the worker is presumed lost).
    claim = models.UUIDField(null=True, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True)
    run = models.ForeignKey("automations.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    error = models.TextField(blank=True, db_default="", help_text="Why the delivery failed, when it did.")
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
