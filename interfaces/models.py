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
    from config.hosts import normalize_host

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
    # The client address as config computes it (catalog.ratelimits.client_address, TRUSTED_PROXY_COUNT).
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
