"""The template context of a white-label domain's pages: the account's name and logo, in place of the service's."""

from interfaces.typed_text import without_bidi_controls
from interfaces.whitelabel.views import logo_url


def brand(request) -> dict:
    """white_label: None on the service's own hosts; on an account's domain, its name (may be empty) and logo URL.

    templates/base.html and the chat pages read it: a page of a white-label
    domain never names the service. The name is the owner's text, shown to
    strangers: its bidirectional controls are neutralised, as in every text
    an owner writes for a page.
    """
    found = getattr(request, "white_label_brand", None)
    if found is None:
        return {"white_label": None}
    return {
        "white_label": {
            "name": without_bidi_controls(found.name),
            "logo_url": logo_url(found.logo_digest) if found.logo_digest else "",
        }
    }
