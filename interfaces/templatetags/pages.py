"""Template tags of the pages: a field's input tied to its help text and error (templates/interfaces/_field.html)."""

import json
import re

from django import template
from django.forms import BoundField

from interfaces.typed_text import without_bidi_controls

register = template.Library()


@register.simple_tag
def field_input(field: BoundField) -> str:
    """The field's widget with aria-describedby naming its help text and its error, when it has them.

    Screen readers then read the error with the input it belongs to, not
    only where it sits on the page.
    """
    described_by = []
    if field.help_text:
        described_by.append(f"{field.auto_id}_helptext")
    if field.errors:
        described_by.append(f"{field.auto_id}_error")
    attrs = {"aria-describedby": " ".join(described_by)} if described_by and field.auto_id else None
    return field.as_widget(attrs=attrs)


# Bidirectional controls (U+202A-U+202E, U+2066-U+2069) and the marks (U+200E, U+200F, U+061C): inside a string
# they would show the text around them reversed or reordered, so that "approve" could read as something else.
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@register.filter
def pretty_json(value) -> str:
    """A JSON value as a person reads it (an approval's details, a run's data, a definition): indented, any script's
    letters as themselves, bidirectional controls written as JSON escapes (the same value, shown harmless)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    return _BIDI_CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@register.filter
def shown(value) -> str:
    """Text from trigger data as the pages show it: its bidirectional controls neutralised (interfaces/typed_text.py);
    the element around it also isolates it (dir="auto" or <bdi>), so it reorders nothing beside it."""
    return without_bidi_controls(str(value)) if value is not None else ""
