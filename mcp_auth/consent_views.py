"""/oauth/login, the authorization endpoint: sign-in, the consent page, and the answer sent back to the client.

django-oauth-toolkit's AuthorizationView does the OAuth work (validating the
client and its redirect URI, storing the grant with its PKCE challenge and
RFC 8707 resource, building the redirect); this subclass adds the service's
rules (mcp_auth/authorization.py), its pages, and redirects to the app
callbacks staff allow (cursor://...), which the toolkit would refuse by scheme.
"""

from urllib.parse import urlsplit

from django.shortcuts import render
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.models import get_application_model
from oauth2_provider.views import AuthorizationView
from oauth2_provider.views.mixins import OAuthLibMixin
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from edge.page_headers import BASE_POLICY
from mcp_auth import authorization
from mcp_auth.redirect_uris import FORBIDDEN_SCHEMES


def _refused(refused: authorization.RequestRefused, credentials: dict) -> OAuthToolkitError:
    """The refusal as the toolkit's error, sent back to the (already validated) redirect URI with the state."""
    error = CustomOAuth2Error(error=refused.error, description=refused.description, state=credentials.get("state"))
    return OAuthToolkitError(error=error, redirect_uri=credentials.get("redirect_uri"))


class ConsentView(AuthorizationView):
    template_name = "oauth/consent.html"

    def dispatch(self, request, *args, **kwargs):
        # PostgreSQL refuses NUL in text, and the toolkit looks the client up with whatever it is given.
        if any(
            "\x00" in value for query in (request.GET, request.POST) for _, values in query.lists() for value in values
        ):
            return render(request, "oauth/error.html", {"description": "parameters must not contain NUL"}, status=400)
        return super().dispatch(request, *args, **kwargs)

    def validate_authorization_request(self, request):
        scopes, credentials = super().validate_authorization_request(request)
        try:
            authorization.check_resource(request.GET.getlist("resource"))
            authorization.check_pkce(credentials.get("code_challenge"), credentials.get("code_challenge_method"))
        except authorization.RequestRefused as refused:
            raise _refused(refused, credentials) from None
        return scopes, credentials

    def create_authorization_response(self, request, scopes, credentials, allow):
        """Every code is issued here (the consent form's answer, or a prior approval): the rules are checked again."""
        if allow:
            try:
                authorization.check_resource(credentials.get("resource") or [])
                authorization.check_pkce(credentials.get("code_challenge"), credentials.get("code_challenge_method"))
            except authorization.RequestRefused as refused:
                raise _refused(refused, credentials) from None
        allow = allow and authorization.may_approve(request.user)
        return super().create_authorization_response(request, scopes, credentials, allow)

    def form_valid(self, form):
        if not get_application_model().objects.filter(client_id=form.cleaned_data["client_id"]).exists():
            return self.form_invalid(form)
        return super().form_valid(form)

    def form_invalid(self, form):
        return render(self.request, "oauth/error.html", {"description": "the consent form was incomplete"}, status=400)

    def error_response(self, error, application, **kwargs):
        """Errors the client may hear go back to it; others (unknown client, unregistered redirect URI) are a page."""
        redirect, response = OAuthLibMixin.error_response(self, error, **kwargs)
        if redirect:
            return self.redirect(response["url"], application)
        oauth_error = response["error"]
        context = {"error": oauth_error.error, "description": oauth_error.description}
        return render(self.request, "oauth/error.html", context, status=oauth_error.status_code)

    def redirect(self, redirect_to, application):
        # Reached only with a redirect URI oauthlib matched against the client's registered ones.
        scheme = urlsplit(redirect_to).scheme.lower()
        allowed = ["http", "https"] + ([scheme] if scheme and scheme not in FORBIDDEN_SCHEMES else [])
        return OAuth2ResponseRedirect(redirect_to, allowed)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        context.update(
            may_approve=authorization.may_approve(self.request.user),
            client_name=getattr(application, "name", ""),
            redirect_target=authorization.redirect_target(context.get("redirect_uri") or ""),
            scope_descriptions=authorization.describe_scopes(context.get("scopes") or []),
        )
        return context

    def render_to_response(self, context, **response_kwargs):
        if not context.get("may_approve"):
            response = render(self.request, "oauth/refused.html", context, status=403)
        else:
            response = super().render_to_response(context, **response_kwargs)
        response["Content-Security-Policy"] = page_policy(context.get("redirect_uri") or "")
        return response


def page_policy(redirect_uri: str) -> str:
    """The pages' policy, with the form also allowed to end at the client's redirect URI.

    Browsers apply form-action to where a form's answer redirects, and the
    answer to the consent form is a redirect to the client.
    """
    parts = urlsplit(redirect_uri)
    target = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else f"{parts.scheme}:"
    directives = dict(BASE_POLICY)
    if parts.scheme and parts.scheme.lower() not in FORBIDDEN_SCHEMES:
        directives["form-action"] = f"'self' {target}"
    return "; ".join(f"{name} {value}" for name, value in directives.items())


authorize = ConsentView.as_view()
