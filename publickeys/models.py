"""PublicKey: the key of one public URL, for one purpose and one target object (DESIGN.md contracts 3 and 7)."""

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models


class PublicKey(models.Model):
    """A URL key, kept only as its lookup digest and a sealed copy (publickeys/crypto.py).

    The target is any model's row (an automation for webhook and web service
    URLs); a model whose rows have keys declares a GenericRelation to
    PublicKey, so that deleting a row deletes its keys. A target has at most
    one live key per purpose: issuing another retires it.
    """

    class Purpose(models.TextChoices):
        WEBHOOK = "webhook", "webhook"
        WEB_SERVICE = "web_service", "web service"
        FORM = "form", "form"
        ONE_TIME_FORM = "one_time_form", "one-time form"
        FORM_SESSION = "form_session", "form session"
        CHAT_WIDGET = "chat_widget", "chat widget"
        APPROVAL_QUEUE = "approval_queue", "approval queue"
        CONNECTION_HOOK = "connection_hook", "connection webhook"
        APP_HOOK = "app_hook", "app callback"

    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    sealed = models.TextField(blank=True, editable=False, help_text="Emptied when the key is retired.")
    target_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, related_name="+")
    target_id = models.PositiveBigIntegerField()
    target = GenericForeignKey("target_type", "target_id")
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True, editable=False)
    # A key that works until then (a one-time form's, its step's expiry): past it, it misses as an unknown key
    # does, in the same lookup, before the sweeper has ended what it was for.
    expires_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["target_type", "target_id", "purpose"],
                condition=models.Q(retired_at__isnull=True),
                name="one_live_key_per_target_and_purpose",
            ),
        ]
        indexes = [models.Index(fields=["target_type", "target_id"], name="public_key_target")]

    def __str__(self) -> str:
        state = "retired" if self.retired_at else "live"
        return f"{self.get_purpose_display()} key of {self.target_type.model} {self.target_id} ({state})"
