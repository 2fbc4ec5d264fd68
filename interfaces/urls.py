"""Routes of this app: the chat widget's (docs/interfaces.md); the other pages arrive with their issues."""

from django.urls import path

from interfaces import chat_views

urlpatterns: list = [
    # Before webchat/<key>: embed.js is the script, its key is in the query.
    path("webchat/embed.js", chat_views.embed_script, name="chat_embed"),
    path("webchat/<str:key>", chat_views.widget_page, name="chat_widget"),
    path("webchat/<str:key>/messages", chat_views.messages, name="chat_messages"),
]
