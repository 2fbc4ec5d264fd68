"""django-oauth-toolkit's request validator, noting on the request the family of the refresh token it just made.

A code used twice revokes the tokens it gave (mcp_auth/validator.py), so the
code is remembered as spent with the family of its tokens. oauthlib calls
invalidate_authorization_code after the tokens are saved, with the request
alone; the toolkit makes the refresh token, and draws its family, in
`_create_refresh_token`, private, which returns it to `_save_bearer_token`,
private too. No public method sees the new token.
"""

from oauth2_provider.oauth2_validators import OAuth2Validator

WRITTEN_FOR = {"django-oauth-toolkit": "3.4.1"}


class FamilyNotingValidator(OAuth2Validator):
    def _create_refresh_token(self, request, refresh_token_code, access_token, previous_refresh_token):
        """The toolkit's, noting the new token's family on the request as issued_token_family."""
        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        request.issued_token_family = refresh_token.token_family
        return refresh_token
