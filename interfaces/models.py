"""Models of the pages: white-label domains, and files sent through forms."""

import uuid

from django.conf import settings
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
