"""Paths of the authorization server on BASE_URL (docs/mcp.md "Authorization")."""

from django.urls import path

from mcp_auth import consent_views, views

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.authorization_server_metadata,
        name="oauth-authorization-server-metadata",
    ),
    path("oauth/login", consent_views.authorize, name="oauth-authorize"),
    path("oauth/token", views.TokenView.as_view(), name="oauth-token"),
    path("oauth/revoke", views.RevokeView.as_view(), name="oauth-revoke"),
    path("oauth/client", views.register_client, name="oauth-register"),
]
