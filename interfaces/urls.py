"""Routes of this app on BASE_URL (SPEC 4.3)."""

from django.urls import path

from interfaces import api, approval_views, diagram_views, views

urlpatterns = [
    path("automation", diagram_views.automation_diagram, name="automation-diagram"),
    path("moderation", approval_views.moderation, name="moderation"),
    path("moderation/api", api.ModerationAPI.as_view(), name="moderation-api"),
    path("form/s/<str:key>", views.one_time_form, name="one-time-form"),
    path("form/run/<str:key>", views.session_page, name="form-session"),
    path("form/files/<uuid:file_id>", views.form_file, name="form-file"),
    path("form/<str:key>", views.hosted_form, name="hosted-form"),
]
