"""Paths of BASE_URL: catalog feed, interfaces, sign-in, OAuth server and admin."""
from django.contrib import admin
from django.urls import include, path

from config.views import health

urlpatterns = [
    path("catalog/v1/", include("catalog.urls")),
    path("admin/", admin.site.urls),
    path("", include("interfaces.urls")),
    path("", include("mcp_auth.urls_base")),
    path("healthz", health, name="health"),
]
