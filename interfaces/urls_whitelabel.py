"""Routes of a white-label domain: only the form trigger's and the chat widget's (SPEC 4.3)."""

from django.urls import path

from interfaces import chat_views

urlpatterns: list = [
    path("webchat/embed.js", chat_views.embed_script, name="chat_embed"),
    path("webchat/<str:key>", chat_views.widget_page, name="chat_widget"),
    path("webchat/<str:key>/messages", chat_views.messages, name="chat_messages"),
]
