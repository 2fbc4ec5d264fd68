"""Routes of the owner's pages on BASE_URL, under /account/ (docs/accounts.md)."""

from django.urls import path

from accounts import agent_views, automation_views, brand_views, connection_views, run_views, verification_views

urlpatterns = [
    path("", automation_views.automation_list, name="account-automations"),
    path("import", automation_views.import_document, name="account-import"),
    path("automations/<int:automation_id>", automation_views.automation_page, name="account-automation"),
    path("automations/<int:automation_id>/state", automation_views.switch, name="account-switch"),
    path("automations/<int:automation_id>/urls", automation_views.renew_url, name="account-renew-url"),
    path(
        "automations/<int:automation_id>/verification",
        verification_views.verification_page,
        name="account-verification",
    ),
    path("automations/<int:automation_id>/definition", automation_views.definition, name="account-definition"),
    path("automations/<int:automation_id>/export", automation_views.export, name="account-export"),
    path("automations/<int:automation_id>/runs", run_views.run_list, name="account-runs"),
    path("runs/<int:run_id>", run_views.run_page, name="account-run"),
    path("runs/<int:run_id>/retry", run_views.retry, name="account-retry"),
    path("brand", brand_views.brand, name="account-brand"),
    path("brand/logo", brand_views.logo, name="account-brand-logo"),
    path("brand/logo/remove", brand_views.remove_logo, name="account-brand-remove-logo"),
    path("brand/remove", brand_views.remove_domain, name="account-brand-remove"),
    path("connections", connection_views.connection_list, name="account-connections"),
    path("connections/new", connection_views.connect, name="account-connect"),
    path("connections/oauth/callback", connection_views.oauth_callback, name="account-connection-oauth-callback"),
    path("connections/<int:connection_id>", connection_views.connection_page, name="account-connection"),
    path("connections/<int:connection_id>/name", connection_views.rename, name="account-connection-rename"),
    path("connections/<int:connection_id>/key", connection_views.reconnect, name="account-connection-reconnect"),
    path("connections/<int:connection_id>/delete", connection_views.delete, name="account-connection-delete"),
    path("agents", agent_views.agent_list, name="agents"),
    path("agents/<int:agent_id>/disconnect", agent_views.disconnect, name="agent-disconnect"),
]
