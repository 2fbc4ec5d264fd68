"""Routes of this app on BASE_URL (SPEC 4.3)."""

from django.urls import path

from interfaces.approvals import api as approval_api
from interfaces.approvals import views as approval_views
from interfaces.chat import views as chat_views
from interfaces.diagram import views as diagram_views
from interfaces.forms import session_api
from interfaces.forms import views as form_views

urlpatterns = [
    path("automation", diagram_views.automation_diagram, name="automation-diagram"),
    path("moderation", approval_views.moderation, name="moderation"),
    path("moderation/api", approval_api.ModerationAPI.as_view(), name="moderation-api"),
    path("form/s/<str:key>", form_views.one_time_form, name="one-time-form"),
    path("form/run/<str:key>", form_views.session_page, name="form-session"),
    path("form/run/<str:key>/state", session_api.SessionStateAPI.as_view(), name="form-session-state"),
    path("form/files/<uuid:file_id>", form_views.form_file, name="form-file"),
    path("form/<str:key>", form_views.hosted_form, name="hosted-form"),
    # Before webchat/<key>: embed.js is the script, its key is in the query.
    path("webchat/embed.js", chat_views.embed_script, name="chat_embed"),
    path("webchat/<str:key>", chat_views.widget_page, name="chat_widget"),
    path("webchat/<str:key>/messages", chat_views.messages, name="chat_messages"),
]
