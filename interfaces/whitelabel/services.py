"""What an owner changes of their white-label domain: the domain and name, the logo, or the whole of it.

Each takes the owner and touches only that owner's row; each change is
served at once by this process and within domains.CACHE_SECONDS by the
others (domains.forget), as admin's changes are.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from interfaces.whitelabel import domains
from interfaces.whitelabel.logos import Logo
from interfaces.whitelabel.models import WhiteLabelDomain


def taken_message() -> str:
    return _("Another account uses this domain. Choose another one.")


def taken_by_another(*, domain: str, owner) -> bool:
    return WhiteLabelDomain.objects.filter(domain=domain).exclude(owner=owner).exists()


@transaction.atomic
def save_domain(*, owner, domain: str, name: str, logo: Logo | None = None) -> WhiteLabelDomain:
    """Set the owner's domain and name, and the logo when one is given, making the row when there is none.

    Raises ValidationError by field: a domain that is not a host name, one of
    the service's own hosts, or one another account uses (told as such,
    also when two owners save the same domain at once).
    """
    # The owner's row locked first: two saves of one owner (a double click) make one row, the second updating it.
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
    row = WhiteLabelDomain.objects.select_for_update().filter(owner=owner).first() or WhiteLabelDomain(owner=owner)
    row.domain, row.name = domain, name
    if logo is not None:
        row.logo, row.logo_content_type, row.logo_digest = logo.content, logo.content_type, logo.digest
    row.full_clean(validate_unique=False)  # the domain checked and normalized, the name trimmed
    if taken_by_another(domain=row.domain, owner=owner):
        raise ValidationError({"domain": taken_message()})
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:  # the same domain saved by another account since the check above
        raise ValidationError({"domain": taken_message()}) from None
    domains.forget()
    return row


@transaction.atomic
def set_logo(*, owner, logo: Logo | None) -> bool:
    """Replace the logo of the owner's domain, or remove it (None); False when the owner has no domain."""
    changed = WhiteLabelDomain.objects.filter(owner=owner).update(
        logo=logo.content if logo else None,
        logo_content_type=logo.content_type if logo else "",
        logo_digest=logo.digest if logo else "",
    )
    domains.forget()
    return bool(changed)


@transaction.atomic
def remove_domain(*, owner) -> bool:
    """Stop serving the owner's domain (its name and logo go with it); False when there was none."""
    deleted, _rows = WhiteLabelDomain.objects.filter(owner=owner).delete()
    domains.forget()
    return bool(deleted)
