"""django-oauth-toolkit's request validator with the rules it lacks.

"offline_access" is accepted and ignored, and a code used twice revokes the
tokens it gave (mcp_auth/spent_codes.py), as a refresh token used twice
revokes its family, also when the two uses race.
"""

from django.db import transaction
from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauthlib.oauth2.rfc6749 import errors

from mcp_auth import authorization, spent_codes
from overrides.oauth_refresh_tokens import FamilyNotingValidator

IGNORED_SCOPES = frozenset({"offline_access"})


class McpValidator(FamilyNotingValidator):
    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        """Drop offline_access before the check, so it is neither refused nor granted.

        Clients built for OpenID providers ask for offline_access to get a
        refresh token; here every grant gets one, so the word adds nothing.
        oauthlib returns request.scopes to the view, which shows and stores
        what is left (the default scope when nothing is).
        """
        kept = [scope for scope in scopes if scope not in IGNORED_SCOPES]
        if len(kept) != len(scopes):
            kept = kept or list(self.get_default_scopes(client_id, request))
            request.scopes = kept
        return super().validate_scopes(client_id, kept, client, request, *args, **kwargs)

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        """A code with no live grant is refused; if it was spent, the tokens it gave are revoked as well."""
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        spent_codes.revoke_reuse(code, client_id=client_id)
        return False

    def get_code_challenge(self, code, request):
        return self._grant(code, request).code_challenge or None

    def get_code_challenge_method(self, code, request):
        return self._grant(code, request).code_challenge_method or None

    def _grant(self, code, request):
        """The code's grant, as the toolkit's checks after validate_code read it. A racing exchange of the same code
        that deleted it since makes this a code used twice: invalid_grant and the winner's tokens revoked, not the
        toolkit's DoesNotExist (a 500)."""
        grant = get_grant_model().objects.filter(code=code, application=request.client).first()
        if grant is None:
            spent_codes.revoke_reuse(code, client_id=request.client_id)
            raise errors.InvalidGrantError("the code was used twice", request=request)
        return grant

    def save_bearer_token(self, token, request, *args, **kwargs):
        """The toolkit's, but a refresh token that a racing request rotated first is reuse (RFC 9700 4.14.2): its
        family is revoked, the racing request's new tokens with it, and this one gets invalid_grant. The toolkit
        would answer it with the winner's tokens, which it no longer knows (only their hashes are stored): "".
        """
        used = getattr(request, "refresh_token_instance", None) if request.grant_type == "refresh_token" else None
        if used is None:
            return super().save_bearer_token(token, request, *args, **kwargs)
        with transaction.atomic():  # the winner's lock is waited for; this one is held through the save
            locked = get_refresh_token_model().objects.select_for_update().filter(pk=used.pk).first()
            if locked is not None and locked.revoked is None:
                return super().save_bearer_token(token, request, *args, **kwargs)
        get_refresh_token_model().revoke_family(used.token_family)
        raise errors.InvalidGrantError("the refresh token was used twice", request=request)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        """The toolkit's check, and its user must still be allowed "MCP Tools": a withdrawn permission, or a
        deactivated account, gets no new tokens (the MCP endpoint would refuse them anyway)."""
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        return authorization.may_approve(request.user)

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, request, *args, **kwargs):
        """A redirect_uri other than the authorization request's is invalid_grant (RFC 6749 5.2), not oauthlib's
        invalid_request."""
        if self._grant(code, request).redirect_uri_allowed(redirect_uri):
            return True
        raise errors.InvalidGrantError("redirect_uri does not match the authorization request's", request=request)

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        """Delete the grant and remember the code as spent, with the family of the tokens it just gave.

        oauthlib calls this after the tokens are saved. When two exchanges of
        one code race, both pass validate_code and save tokens; the loser's
        delete waits for the winner's transaction and finds no grant. Then the
        code has been used twice: the winner's tokens and the loser's go.
        """
        family = getattr(request, "issued_token_family", None)  # noted by overrides/oauth_refresh_tokens.py
        try:
            with transaction.atomic():
                super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
                spent_codes.record(code, family)
        except errors.InvalidGrantError:
            spent_codes.revoke_reuse(code, client_id=client_id, also=family)
            raise
