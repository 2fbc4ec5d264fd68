"""Paths of BASE_URL under /account/agents: a person's connected AI agents (accounts/agent_views.py)."""

from django.urls import path

from accounts import agent_views

urlpatterns = [
    path("account/agents", agent_views.agent_list, name="agents"),
    path("account/agents/<int:agent_id>/disconnect", agent_views.disconnect, name="agent-disconnect"),
]
