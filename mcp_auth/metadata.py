"""The authorization server metadata document (RFC 8414) with exactly the fields and values of SPEC section 5.

django-oauth-toolkit's own metadata view adds fields the spec does not list
(client_id_metadata_document_supported, revocation auth methods) and
derives the issuer from the request's host; this one is built from
BASE_URL, so `issuer` is byte-identical to the protected-resource
metadata's `authorization_servers` entry whatever Host a request names.
"""

from django.conf import settings

SCOPES_SUPPORTED = ["mcp:tools", "mcp:automation_builder"]


def authorization_server_metadata() -> dict:
    base = settings.BASE_URL
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth/login",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/client",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "scopes_supported": list(SCOPES_SUPPORTED),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
    }
