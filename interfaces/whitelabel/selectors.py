"""What the pages read of a white-label domain: an owner's settings, and a logo's bytes."""

from interfaces.whitelabel.logos import Logo
from interfaces.whitelabel.models import WhiteLabelDomain


def domain_of(owner) -> WhiteLabelDomain | None:
    """The owner's white-label settings, without the logo's bytes."""
    return WhiteLabelDomain.objects.filter(owner=owner).defer("logo").first()


def logo_of(owner_id: int) -> Logo | None:
    """The logo of the account's domain, or None."""
    row = WhiteLabelDomain.objects.filter(owner_id=owner_id).values_list("logo", "logo_content_type", "logo_digest")
    found = row.first()
    if found is None or not found[0]:
        return None
    return Logo(bytes(found[0]), found[1], found[2])
