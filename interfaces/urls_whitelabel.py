"""Routes of a white-label domain: /form/{key} and /webchat/{key} (with /webchat/embed.js) only; everything else 404.

The views here serve keys of the domain's own account only
(request.white_label_owner_id, set by config.hosts.WhiteLabelHostMiddleware);
another account's key gets the same answer as a key never issued.
"""

from django.urls import path

from interfaces import views

urlpatterns = [
    path("form/<str:key>", views.hosted_form),
]
