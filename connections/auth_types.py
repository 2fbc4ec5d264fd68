"""What connecting takes for each auth_type of the catalog (SPEC 2.1), and which of them connect here today."""

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class AuthType:
    name: str
    takes_credential: bool  # the owner pastes a secret, sealed and checked by the app's test call
    connectable: bool  # False: its flow is not built yet; the page says so and makes nothing
    stand_in: bool = False  # a pasted token standing in for a flow not built yet, labelled as such
    signs_in: bool = False  # the owner signs in on the app's own page and it gives tokens (connections/oauth.py)
    field_label: str = ""


API_KEY = AuthType("api_key", takes_credential=True, connectable=True, field_label=_("API key"))
NONE = AuthType("none", takes_credential=False, connectable=True)
# The real flows of these two exchange tokens with a broker or the app; until they are built, the owner pastes a
# token the app issued, handled as an API key, and the pages say it is a stand-in (docs/connections.md).
MANAGED_AUTH = AuthType(
    "managed_auth", takes_credential=True, connectable=True, stand_in=True, field_label=_("Access token")
)
TOKEN_MINT = AuthType("token_mint", takes_credential=True, connectable=True, stand_in=True, field_label=_("Token"))
# Connecting through the app's sign-in page: the authorization code flow, its tokens refreshed (connections/oauth.py).
OAUTH_V2 = AuthType("oauth_v2", takes_credential=False, connectable=True, signs_in=True)

KNOWN = {kind.name: kind for kind in (API_KEY, NONE, MANAGED_AUTH, TOKEN_MINT, OAUTH_V2)}


def of(name: str) -> AuthType:
    """The auth_type by its catalog name; one the catalog adds later is known to exist and not connectable yet."""
    return KNOWN.get(name) or AuthType(name, takes_credential=False, connectable=False)
