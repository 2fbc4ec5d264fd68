"""Dynamic client registration (RFC 7591): the metadata document's validation and the client it creates.

Anonymous registration is open, as MCP clients need: an editor or agent
registers itself the first time a user adds this server, with no account of
its own. What keeps that safe is elsewhere: a client gets nothing until a
user holding "MCP Tools" approves it on the consent page, its codes reach
only the redirect URIs it registered (mcp_auth/redirect_uris.py), PKCE
binds each code to the client that asked for it, and registrations are
counted per client IP (edge/limits.py). Clients that never
obtain a token are deleted after a day (purge_unused_clients).

django-oauth-toolkit's own registration view is not used: it answers
client_secret_basic whatever was asked, issues RFC 7592 management tokens
this service does not offer, and validates redirect URIs by scheme alone.
"""

import re
import unicodedata
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model
from rest_framework import serializers

from mcp_auth.models import RegisteredClient
from mcp_auth.redirect_uris import redirect_uri_problem

MAX_REDIRECT_URIS = 10
AUTH_METHODS = [choice.value for choice in RegisteredClient.AuthMethod]

# Marks and embeddings that reorder what follows them (Unicode UAX #9): U+202E shows "exe.png" as "gnp.exe".
_BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class ClientMetadata(serializers.Serializer):
    """The RFC 7591 fields this server acts on; any other field is accepted and ignored (RFC 7591 2)."""

    redirect_uris = serializers.ListField(
        child=serializers.CharField(max_length=2000, trim_whitespace=False, allow_blank=True),
        min_length=1,
        max_length=MAX_REDIRECT_URIS,
    )
    token_endpoint_auth_method = serializers.ChoiceField(choices=AUTH_METHODS, default="client_secret_post")
    grant_types = serializers.ListField(
        child=serializers.ChoiceField(choices=["authorization_code", "refresh_token"]),
        default=lambda: ["authorization_code", "refresh_token"],
    )
    response_types = serializers.ListField(child=serializers.ChoiceField(choices=["code"]), default=lambda: ["code"])
    client_name = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")

    def validate_redirect_uris(self, uris: list[str]) -> list[str]:
        for uri in uris:
            if problem := redirect_uri_problem(uri):
                # RFC 7591 3.2.2 names this error invalid_redirect_uri.
                raise serializers.ValidationError(f"{uri[:200]!r} {problem}", code="invalid_redirect_uri")
        return list(dict.fromkeys(uris))

    def validate_grant_types(self, grant_types: list[str]) -> list[str]:
        if "authorization_code" not in grant_types:
            raise serializers.ValidationError("must include authorization_code, the only flow this server offers")
        return ["authorization_code", "refresh_token"]

    def validate_client_name(self, name: str) -> str:
        """The name the consent page shows: no control characters, nor bidirectional ones, which make it read as another
        (U+202E turns "gnp.exe" around; RFC 7591 5 warns of names that mislead)."""
        if any(unicodedata.category(char) == "Cc" for char in name) or _BIDI_CONTROL.search(name):
            raise serializers.ValidationError("must not contain control characters or bidirectional controls")
        return name.strip()


@dataclass(frozen=True)
class Registration:
    application: object
    auth_method: str
    secret: str | None  # the client's secret in clear, answered once; only its hash is kept

    def as_response(self) -> dict:
        """The RFC 7591 3.2.1 answer: the metadata as registered, the method asked for echoed."""
        application = self.application
        body = {
            "client_id": application.client_id,
            "client_id_issued_at": int(application.created.timestamp()),
            "client_name": application.name,
            "redirect_uris": application.redirect_uris.split(),
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": self.auth_method,
        }
        if self.secret is not None:
            body["client_secret"] = self.secret
            body["client_secret_expires_at"] = 0  # never
        return body


@transaction.atomic
def register_client(*, name: str, redirect_uris: list[str], auth_method: str, address: str | None) -> Registration:
    """Create the client; a confidential one (client_secret_post or _basic) gets a secret, a public one none.

    A public client (token_endpoint_auth_method "none": VS Code, Claude Code,
    the Inspector) cannot keep a secret, so it has none and proves itself
    with PKCE alone, which every authorization request needs anyway.
    """
    Application = get_application_model()
    public = auth_method == RegisteredClient.AuthMethod.NONE
    secret = None if public else generate_client_secret()
    application = Application(
        name=name,
        redirect_uris=" ".join(redirect_uris),
        client_type=Application.CLIENT_PUBLIC if public else Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        client_secret=secret or "",
        hash_client_secret=not public,  # nothing to hash: a public client has no secret
        registration_source=Application.RegistrationSource.DCR,
    )
    # Not full_clean(): django-oauth-toolkit's clean() allows only http(s) redirect URIs, and these were
    # checked against the service's own rules above (app callbacks from the allow list included).
    application.save()
    RegisteredClient.objects.create(
        application=application, token_endpoint_auth_method=auth_method, registered_from=address
    )
    return Registration(application=application, auth_method=auth_method, secret=secret)


def mark_used(*, access_token_checksum: str) -> None:
    """Record that the client of this new access token obtained one: it is no longer purged as never used."""
    AccessToken = get_access_token_model()
    RegisteredClient.objects.filter(
        first_token_at__isnull=True,
        application_id__in=AccessToken.objects.filter(token_checksum=access_token_checksum).values("application_id"),
    ).update(first_token_at=timezone.now())


def purge_unused_clients(*, now=None) -> int:
    """Delete registered clients that obtained no token within OAUTH_UNUSED_CLIENT_SECONDS of registering.

    Registration is open to anyone, so abandoned attempts (a user who closed
    the consent page, a script) would otherwise pile up for ever. A client
    with any token row is kept even if its first use went unrecorded.
    Clients staff made in admin have no registration record and are never
    touched. Returns how many were deleted.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.OAUTH_UNUSED_CLIENT_SECONDS)
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    stale = (
        get_application_model()
        .objects.filter(registration__first_token_at__isnull=True, registration__registered_at__lt=cutoff)
        .exclude(Exists(AccessToken.objects.filter(application=OuterRef("pk"))))
        .exclude(Exists(RefreshToken.objects.filter(application=OuterRef("pk"))))
    )
    deleted = 0
    for application in stale.iterator():
        application.delete()  # cascades to its grants and its registration record
        deleted += 1
    return deleted
