"""Routes of this app on BASE_URL (SPEC 4.3)."""

from django.urls import path

from interfaces import api, diagram_views, views

urlpatterns = [
    path("automation", diagram_views.automation_diagram, name="automation-diagram"),
    path("moderation", views.moderation, name="moderation"),
    path("moderation/api", api.ModerationAPI.as_view(), name="moderation-api"),
]
