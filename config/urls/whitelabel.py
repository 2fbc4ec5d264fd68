"""Paths of a white-label domain: only the form and chat widget pages, the account's logo, and its error pages."""

from django.urls import include, path

urlpatterns = [
    path("", include("interfaces.urls_whitelabel")),
]

# Django reads the handlers of the URLconf that answered: the service's own hosts keep Django's pages.
handler400 = "interfaces.whitelabel.errors.bad_request"
handler403 = "interfaces.whitelabel.errors.permission_denied"
handler404 = "interfaces.whitelabel.errors.page_not_found"
handler500 = "interfaces.whitelabel.errors.server_error"
