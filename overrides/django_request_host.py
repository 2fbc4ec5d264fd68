"""Django's HttpRequest's private answers to "which host?" and "over https?", asked from outside a served request.

Django decides a request's host and scheme in two private methods:
`_get_raw_host` (the Host, or X-Forwarded-Host under USE_X_FORWARDED_HOST,
before ALLOWED_HOSTS is checked) and `_get_scheme` (the server's scheme,
before SECURE_PROXY_SSL_HEADER is read), which WSGIRequest and ASGIRequest
override. A white-label domain is named before Django's host check refuses
it (interfaces/whitelabel/domains.py), and the hooks process asks Django's own answers
for a request Django never builds (hooks/routes.py): there is no public way
to do either without repeating Django's rules.
"""

from django.http import HttpRequest

WRITTEN_FOR = {"Django": "5.2.19"}


def raw_host(request: HttpRequest) -> str:
    """The host the request names, as Django reads it, whether or not ALLOWED_HOSTS lists it."""
    return request._get_raw_host()


class SchemeRequest(HttpRequest):
    """An HttpRequest whose server's scheme is the one given (get_host, is_secure then answer as Django does)."""

    def __init__(self, scheme: str):
        super().__init__()
        self.server_scheme = scheme

    def _get_scheme(self) -> str:
        return self.server_scheme
