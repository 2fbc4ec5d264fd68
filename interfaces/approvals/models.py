"""Approval queues and their items: the decisions approval steps ask of people."""

from django.contrib.contenttypes.fields import GenericRelation
from django.db import models


class ApprovalQueue(models.Model):
    """The one approval queue of an automation: its approval steps put their items here, behind one link."""

    automation = models.OneToOneField("automations.Automation", on_delete=models.CASCADE, related_name="approval_queue")
    # Its approval_queue key (publickeys/): deleted with it, so a deleted automation's link shows the unavailable page.
    public_keys = GenericRelation("publickeys.PublicKey", content_type_field="target_type", object_id_field="target_id")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"approval queue of {self.automation}"


class ApprovalItem(models.Model):
    """One decision asked of a person by one approval step of one run.

    Pending while undecided and its run still waits for it: a run that
    expired, was reset or was deleted leaves it closed (interfaces.approvals.queues).
    """

    class Decision(models.TextChoices):
        APPROVED = "approved"
        REJECTED = "rejected"

    queue = models.ForeignKey(ApprovalQueue, on_delete=models.CASCADE, related_name="items")
    run = models.ForeignKey("automations.Run", on_delete=models.CASCADE, related_name="approval_items")
    title = models.CharField(max_length=200)
    text = models.TextField(blank=True)
    details = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=10, choices=Decision.choices, blank=True)
    comment = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # The client address as config computes it (edge.clients.client_address, TRUSTED_PROXY_COUNT).
    decided_from = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["queue", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.title} ({self.decision or 'undecided'})"
