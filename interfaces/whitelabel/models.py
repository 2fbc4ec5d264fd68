"""An account's white-label domain: its hosted forms and chat widgets on a domain of its own."""

from django.conf import settings
from django.db import models

from interfaces.whitelabel.names import validate_domain


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
