"""django-oauth-toolkit's TokenView with its authorization_flow_token_response copied, less the app_authorized signal.

The toolkit's method looks the new access token up again after every grant
(a query) only to send app_authorized, which nothing here listens to; there
is no setting to skip it, so its body is copied from the toolkit's version
below without those lines. Which parameters are sensitive, and what is done
with the answer, is mcp_auth/views.py's.
"""

from django.http import HttpResponse
from oauth2_provider import views as toolkit

WRITTEN_FOR = {"django-oauth-toolkit": "3.4.1"}


class TokenViewWithoutSignal(toolkit.TokenView):
    def authorization_flow_token_response(self, request, *args, **kwargs):
        """The toolkit's, without its app_authorized signal (nothing listens, and it cost a query per grant)."""
        _, headers, body, status = self.create_token_response(request)
        response = HttpResponse(content=body, status=status)
        for name, value in headers.items():
            response[name] = value
        return response
