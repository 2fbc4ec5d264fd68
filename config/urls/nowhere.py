"""Paths of a Host the service does not name and no account owns, though ALLOWED_HOSTS let it in: none (404).

One pattern answers them all: with no pattern at all, Django in DEBUG answers "/" with its "The install worked
successfully" page, and 200.
"""

from django.http import HttpResponseNotFound
from django.urls import re_path


def nothing(request, rest: str = ""):
    return HttpResponseNotFound()


urlpatterns = [re_path(r"^(?P<rest>.*)$", nothing)]
