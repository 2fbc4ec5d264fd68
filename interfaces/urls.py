"""Routes of this app on BASE_URL (SPEC 4.3)."""

from django.urls import path

from interfaces import api, approval_views, chat_views, diagram_views, session_api, views

urlpatterns = [
    path("automation", diagram_views.automation_diagram, name="automation-diagram"),
    path("moderation", approval_views.moderation, name="moderation"),
    path("moderation/api", api.ModerationAPI.as_view(), name="moderation-api"),
    path("form/s/<str:key>", views.one_time_form, name="one-time-form"),
    path("form/run/<str:key>", views.session_page, name="form-session"),
    path("form/run/<str:key>/state", session_api.SessionStateAPI.as_view(), name="form-session-state"),
    path("form/files/<uuid:file_id>", views.form_file, name="form-file"),
    path("form/<str:key>", views.hosted_form, name="hosted-form"),
    # Before webchat/<key>: embed.js is the script, its key is in the query.
    path("webchat/embed.js", chat_views.embed_script, name="chat_embed"),
    path("webchat/<str:key>", chat_views.widget_page, name="chat_widget"),
    path("webchat/<str:key>/messages", chat_views.messages, name="chat_messages"),
]
