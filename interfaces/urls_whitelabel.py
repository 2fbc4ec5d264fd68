"""Routes of a white-label domain: /form/{key} with its session pages, /webchat/{key} (with /webchat/embed.js) and
the account's logo (/brand/logo) only; everything else 404.

The views here serve keys of the domain's own account only
(request.white_label_owner_id, set by interfaces.whitelabel.domains.WhiteLabelHostMiddleware);
another account's key gets the same answer as a key never issued.
"""

from django.urls import path

from interfaces.chat import views as chat_views
from interfaces.forms import session_api
from interfaces.forms import views as form_views
from interfaces.whitelabel import views as brand_views

urlpatterns = [
    path("form/run/<str:key>", form_views.session_page),
    path("form/run/<str:key>/state", session_api.SessionStateAPI.as_view()),
    path("form/<str:key>", form_views.hosted_form),
    path("webchat/embed.js", chat_views.embed_script, name="chat_embed"),
    path("webchat/<str:key>", chat_views.widget_page, name="chat_widget"),
    path("webchat/<str:key>/messages", chat_views.messages, name="chat_messages"),
    path("brand/logo", brand_views.logo, name="white-label-logo"),
]
