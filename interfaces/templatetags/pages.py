"""Template tags of the pages: a field's input tied to its help text and error (templates/interfaces/_field.html)."""

import json

from django import template
from django.forms import BoundField

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


@register.filter
def pretty_json(value) -> str:
    """A JSON value as a person reads it (an approval's details): indented, any script's letters as themselves."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
