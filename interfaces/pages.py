"""Answers every interface page shares."""

from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.cache import never_cache


@never_cache
def unavailable(request):
    """SPEC 7.4: one and the same page for a link used, expired, ended or never issued.

    It never says which: the page, its status and its headers are the same
    for all of them, so that trying keys teaches nothing.
    """
    return render(request, "interfaces/unavailable.html", status=404)


def see_other(location: str) -> HttpResponse:
    """303 after a POST: the browser GETs location, and a reload repeats nothing."""
    response = HttpResponseRedirect(location)
    response.status_code = 303
    return response
