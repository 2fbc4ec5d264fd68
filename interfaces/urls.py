"""Routes of this app on BASE_URL."""

from django.urls import path

from interfaces import diagram_views

urlpatterns = [
    path("automation", diagram_views.automation_diagram, name="automation-diagram"),
]
