"""What log lines and error reports never hold in clear: URL keys, and OAuth credentials sent in a query string.

A client that puts a token, a code or a secret in a URL has it written to
every access log on its way (this service's, a proxy's); the service refuses
such a request (docs/mcp.md), and the line it logs about it still carries
the URL. Here the value of each of CREDENTIALS after `?` or `&` (also spelled
%3F, %26 or &amp;, and the name and `=` percent-encoded as a server would
decode them), or at the start of the text or of a word (a query string
logged alone), is replaced by PLACEHOLDER, and every URL key by {key}
(publickeys/redaction.py). Text that only looks like one (`exit code=1`)
loses its value too: over-redacting costs a log line some detail, missing a
token would hand out a credential.
"""

import re

from publickeys import redaction

CREDENTIALS = ("access_token", "refresh_token", "code", "client_secret", "code_verifier")
PLACEHOLDER = "{redacted}"

# A value runs to the next parameter, fragment or end of the URL, spelled plainly or percent-encoded (a query
# inside another URL's parameter, as a Referer's redirect_uri carries one).
_VALUE = r"(?:(?!%2[036])[^\s&#\"'<>\\`|])+"
_CREDENTIAL = re.compile(
    r"(?P<head>(?:[?&]|&amp;|%3F|%26|(?<![^\s\"'(\[<{,;:]))(?:"
    + "|".join(redaction.spelled(name) for name in CREDENTIALS)
    + r")(?:=|%3D))"
    + _VALUE,
    re.IGNORECASE,
)


def redact_credentials(text: str) -> str:
    """text with the value of every OAuth credential in a query string replaced by PLACEHOLDER."""
    return _CREDENTIAL.sub(rf"\g<head>{PLACEHOLDER}", text)


def redact(text: str) -> str:
    """text with URL keys and OAuth credentials in query strings redacted."""
    return redact_credentials(redaction.redact(text))
