"""Models of the pages: white-label domains, files sent through forms, approval queues and their items."""

import uuid

from django.conf import settings
from django.contrib.contenttypes.fields import GenericRelation
from django.db import models

from interfaces.domain_names import validate_domain


class WhiteLabelDomain(models.Model):
    """An account's own domain, on which its hosted forms and chat widgets are issued and served.

    One per account. The domain's DNS points at this service's web process;
    the service answers it with only /form/{key} and /webchat/{key}
    (docs/interfaces.md, "White-label domains").
    """

    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="white_label_domain", verbose_name="account"
    )
    domain = models.CharField(
        max_length=253,
        unique=True,
        validators=[validate_domain],
        help_text="Such as forms.example.com (a port only if not 80 or 443); its DNS points here.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["domain"]
        verbose_name = "white-label domain"

    def __str__(self) -> str:
        return self.domain

    def clean(self) -> None:
        self.domain = normalize(self.domain)


def normalize(domain: str) -> str:
    from edge.hosts import normalize_host

    return normalize_host(domain.strip().rstrip("."))


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
    expired, was reset or was deleted leaves it closed (interfaces.approvals).
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


class FormFile(models.Model):
    """A file a visitor sent with a form, kept with Django's storage API; only its automation's owner opens it.

    Steps get its name, size, type and link (/form/files/<id>, sign-in
    required). The id is a random UUID, yet not the credential: the owner's
    session is.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    automation = models.ForeignKey("automations.Automation", on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=40)
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=255)
    path = models.CharField(max_length=500, help_text="Its name in the storage.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"


class Conversation(models.Model):
    """One visitor's conversation with one automation's chat widget, made by its first message.

    public_id is what the visitor's conversation token names (interfaces/
    chat_tokens.py); a token names a conversation before it has a row, so an
    opened widget writes nothing until its visitor says something.
    """

    public_id = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    automation = models.ForeignKey("automations.Automation", on_delete=models.CASCADE, related_name="conversations")
    created_at = models.DateTimeField(auto_now_add=True)
    last_message_at = models.DateTimeField(auto_now=True, help_text="When the visitor last wrote.")

    class Meta:
        ordering = ["-last_message_at", "-pk"]
        indexes = [models.Index(fields=["automation", "-last_message_at"], name="chat_conversation_recent")]

    def __str__(self) -> str:
        return f"conversation {self.public_id} of automation {self.automation_id}"


class Message(models.Model):
    """A message of a conversation: a visitor's (which starts a run) or the widget's (a chat_reply step)."""

    class Role(models.TextChoices):
        VISITOR = "visitor"
        BOT = "bot", "reply"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField()
    # The run a visitor's message started; null once that run is deleted.
    run = models.ForeignKey(
        "automations.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="chat_messages"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        # A poll reads a conversation's messages after the last one it has: (conversation, id) covers it.
        indexes = [models.Index(fields=["conversation", "id"], name="chat_message_after")]

    def __str__(self) -> str:
        return f"{self.role} message {self.pk}"
