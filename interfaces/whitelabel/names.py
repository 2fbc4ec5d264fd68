"""What a white-label domain may be: a public host name, with a port when not the default, not a service host."""

import re
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

# Labels of letters, digits and hyphens (not at either end), at least two of them; an optional port.
_DOMAIN = re.compile(r"(?=.{1,253}(:|$))((?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?!-)[a-z0-9-]{1,63}(?<!-)(:[0-9]{1,5})?")


def validate_domain(value: str) -> None:
    """Refuse what is not a host name, and the service's own hosts (BASE_URL, HOOKS_URL, MCP_URL)."""
    from edge.hosts import normalize_host

    domain = normalize_host(value.strip().rstrip("."))
    if not _DOMAIN.fullmatch(domain):
        raise ValidationError(
            _("Enter a host name such as forms.example.com (a port may follow: forms.example.com:8443)."),
            code="not_a_host",
        )
    service_hosts = {
        normalize_host(urlsplit(url).netloc) for url in (settings.BASE_URL, settings.HOOKS_URL, settings.MCP_URL)
    }
    if domain in service_hosts or domain.split(":")[0] in {host.split(":")[0] for host in service_hosts}:
        raise ValidationError(
            _("This is a host of the service itself; a white-label domain must be another one."), code="service_host"
        )
