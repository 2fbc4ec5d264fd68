"""Paths of a Host the service does not name and no account owns, though ALLOWED_HOSTS let it in: none (404).

One pattern answers them all: with no pattern at all, Django in DEBUG answers "/" with its "The install worked
successfully" page, and 200. Its view reads no body and checks no CSRF token, so every method gets the 404 (not
a 403 or a 411 from the middleware before it).
"""

from django.http import Http404
from django.urls import re_path
from django.views.decorators.csrf import csrf_exempt

from edge.length_required import reads_no_body


@csrf_exempt
@reads_no_body
def nothing(request, rest: str = ""):
    raise Http404()


urlpatterns = [re_path(r"^(?P<rest>.*)$", nothing)]
