"""An account's white-label domain: its hosted forms and chat widgets on a domain of its own, under its own name."""

from django.conf import settings
from django.db import models

from interfaces.whitelabel.names import validate_domain


class WhiteLabelDomain(models.Model):
    """An account's own domain, on which its hosted forms and chat widgets are issued and served.

    One per account. The domain's DNS points at this service's web process;
    the service answers it with only the form and chat paths
    (docs/interfaces.md, "White-label domains"). Pages served there show
    the account's name and logo instead of the service's: an empty name
    shows no product name at all. The logo is kept in the row (at most
    interfaces.whitelabel.logos.MAX_BYTES, an image format checked by its
    bytes) so every process serves it without shared file storage.
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
    name = models.CharField(
        max_length=100,
        blank=True,
        help_text="Shown on the domain's pages instead of the service's name; empty shows no name.",
    )
    logo = models.BinaryField(null=True, blank=True, editable=False)
    logo_content_type = models.CharField(max_length=20, blank=True, editable=False)
    # The logo's ETag and the version in its URL, so the pages name a changed logo by a new URL.
    logo_digest = models.CharField(max_length=32, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["domain"]
        verbose_name = "white-label domain"

    def __str__(self) -> str:
        return self.domain

    def clean(self) -> None:
        self.domain = normalize(self.domain)
        self.name = self.name.strip()


def normalize(domain: str) -> str:
    from edge.hosts import normalize_host

    return normalize_host(domain.strip().rstrip("."))
