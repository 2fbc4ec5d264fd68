"""Personas and builders of the form pages' tests."""

import re
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from automations import services
from publickeys import selectors as key_selectors


@pytest.fixture(autouse=True)
def _forms_settings(tmp_path):
    with override_settings(FORM_MIN_FILL_SECONDS=0, MEDIA_ROOT=str(tmp_path / "uploads")):
        yield


FIELDS = [
    {"name": "email", "type": "email", "required": True},
    {"name": "topic", "type": "select", "options": ["sales", "support"], "required": True},
    {"name": "order", "type": "text", "required": True, "visible_if": {"field": "topic", "equals": "support"}},
    {"name": "ref", "type": "hidden"},
]


@pytest.fixture
def make_form(owner):
    """A hosted-form automation (on unless told): its trigger settings and steps."""

    def make(steps=(), *, enabled=True, user=None, **trigger):
        definition = {"trigger": {"type": "form", "fields": FIELDS, **trigger}, "steps": list(steps), "settings": {}}
        return services.create_automation(owner=user or owner, name="A form", definition=definition, enabled=enabled)

    return make


def form_path(automation) -> str:
    return urlsplit(key_selectors.url_of(purpose="form", target=automation)).path


def shown_token(client, path: str, **extra) -> str:
    """The signed time the form was shown at, as a browser would send it back."""
    page = client.get(path, **extra).content.decode()
    return re.search(r'name="fg-shown" value="([^"]+)"', page).group(1)
