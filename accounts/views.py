"""The pages of BASE_URL a person reads before and after signing in: home and docs (sign-up: sign_up.py)."""

import re

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from catalog.models import is_slug
from catalog.selectors import connectable_apps

_DOC_NAME = re.compile(r"[a-z0-9-]+\.md")


def _doc_names() -> list[str]:
    return sorted(path.name for path in (settings.BASE_DIR / "docs").glob("*.md"))


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """What this service is and the public URLs it serves; signed in, the app its sign-up named (?app=)."""
    slug = request.GET.get("app", "")
    app = connectable_apps().filter(slug=slug).first() if request.user.is_authenticated and is_slug(slug) else None
    return render(request, "home.html", {"docs": _doc_names(), "app": app, "signup_open": settings.SIGNUP_OPEN})


@require_safe
def doc(request: HttpRequest, name: str) -> HttpResponse:
    """One of docs/*.md as plain text, as it reads in the repository."""
    if not _DOC_NAME.fullmatch(name) or name not in _doc_names():
        raise Http404("no such document")
    text = (settings.BASE_DIR / "docs" / name).read_text(encoding="utf-8")
    return HttpResponse(text, content_type="text/plain; charset=utf-8")
