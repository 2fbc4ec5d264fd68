"""Routes of the catalog feed under /catalog/v1/."""

from django.urls import path, re_path

from catalog import index, views

urlpatterns = [
    path("", index.routes, name="catalog-index"),
    path("apps", views.app_list, name="catalog-apps"),
    path("apps/<str:slug>", views.app_detail, name="catalog-app"),
    path("apps/<str:slug>/logo", views.app_logo, name="catalog-logo"),
    path("bulk", views.bulk, name="catalog-bulk"),
    path("openapi.json", views.openapi_document, name="catalog-openapi"),
    re_path(r"^(?P<rest>.*)$", views.not_found),
]
