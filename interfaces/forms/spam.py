"""Spam protection of forms without a third party: signals a person never trips.

- The honeypot: a robot that fills every input fills it; people never see it.
- The signed time the page was shown at: only a real page load yields one,
  and a form sent without it, or with another form's, is shown again.
- The page's script (static/forms.js) writes a proof beside it on the
  first trusted key, pointer or input event in the form (a browser's
  autofill fires one), which a robot posting the page's hidden inputs as
  they are does not send, nor a headless browser that only loads the page.
- The rate limits per client and per form (edge/limits.py).

Sending sooner than FORM_MIN_FILL_SECONDS after the page was shown is one
signal among them, never a refusal on its own: a person whose browser fills
a one-field form sends it within a second, with the script's proof (and no
sooner than PROVEN_MIN_SECONDS, which no person beats). Only a
form both that quick and without the proof (a robot, or a person with
scripts off who sent it within the minimum) is shown again, keeping its
answers, with a note to send it again; its shown time is kept, so the next
try passes.
"""

import time

from django.conf import settings
from django.core import signing

HONEYPOT = "fg-website"  # field names of the list cannot hold a hyphen: no clash
SHOWN = "fg-shown"
PROOF = "fg-proof"
# With the proof, a floor no person meets faster: autofill and a click take longer than this.
PROVEN_MIN_SECONDS = 0.2
_SALT = "interfaces.form-shown"
_STALE_SECONDS = 24 * 3600


def shown_token(scope: str) -> str:
    """A signed record of when this form (scope) was shown, carried by the form as a hidden input."""
    return signing.dumps({"s": scope, "t": time.time()}, salt=_SALT, compress=False)


def script_proof(shown: str) -> str:
    """What the page's script writes into PROOF for the shown time: static/forms.js computes the same."""
    return shown[::-1]


def is_honeypot_hit(data) -> bool:
    return bool(data.get(HONEYPOT))


def valid_shown(data, scope: str) -> str | None:
    """The form's shown time as it came back, if it is this form's and signed here within a day; else None."""
    token = data.get(SHOWN, "")
    return token if _shown_at(token, scope) is not None else None


def _shown_at(token: str, scope: str) -> float | None:
    try:
        shown = signing.loads(token, salt=_SALT, max_age=_STALE_SECONDS)
    except signing.BadSignature:  # also a token too old to trust
        return None
    if not isinstance(shown, dict) or shown.get("s") != scope or not isinstance(shown.get("t"), (int, float)):
        return None
    return shown["t"]


def filled_too_fast(data, scope: str) -> bool:
    """True for a form sent without a valid shown time, or sooner than the minimum without the script's proof."""
    token = data.get(SHOWN, "")
    shown_at = _shown_at(token, scope)
    if shown_at is None:
        return True
    elapsed = time.time() - shown_at
    if data.get(PROOF) == script_proof(token):
        return elapsed < PROVEN_MIN_SECONDS
    return elapsed < settings.FORM_MIN_FILL_SECONDS
