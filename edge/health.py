"""Liveness for load balancers, on every host: the process answers; it touches no database."""

from django.http import HttpResponse


def health(request):
    return HttpResponse("ok", content_type="text/plain")
