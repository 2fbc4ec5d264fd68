"""Answers every interface page shares."""

from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache

# Each kind of key in its own words: a person holding a wrong approval link is not told about a form. Within a kind
# the words never say whether the key was used, expired, ended or never issued (SPEC 7.4), so trying keys teaches
# nothing.
GONE = {
    "one-time form": (
        _("This form is not available"),
        _("It may already have been submitted, it may have expired, or the link may be incorrect."),
    ),
    "form": (
        _("This form is not available"),
        _("The link may be incorrect, or the form may have moved to a new link or been removed."),
    ),
    "form session": (
        _("This page is not available"),
        _("The link may be incorrect, or it may have expired."),
    ),
    "approval": (
        _("This approval link is not available"),
        _(
            "It may have expired or been replaced by a newer link, or it may be incorrect. Ask whoever sent it "
            "for a new one."
        ),
    ),
    "chat": (
        _("This chat is not available"),
        _("The link may be incorrect, or the chat may have been removed."),
    ),
    "page": (
        _("Not found"),
        _("There is nothing here for you. Check the link, or sign in with the account it belongs to."),
    ),
}


@never_cache
def unavailable(request, kind: str = "one-time form"):
    """The page for a key of this kind that leads nowhere: one design for every kind, each in its own words."""
    return render(request, "interfaces/unavailable.html", gone_context(kind), status=404)


def gone_context(kind: str) -> dict:
    heading, reason = GONE[kind]
    return {"heading": heading, "reason": reason, "kind": kind}


def see_other(location: str) -> HttpResponse:
    """303 after a POST: the browser GETs location, and a reload repeats nothing."""
    response = HttpResponseRedirect(location)
    response.status_code = 303
    return response
