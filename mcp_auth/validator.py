"""django-oauth-toolkit's request validator with the one rule it lacks: "offline_access" is accepted and ignored."""

from oauth2_provider.oauth2_validators import OAuth2Validator

IGNORED_SCOPES = frozenset({"offline_access"})


class McpValidator(OAuth2Validator):
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
