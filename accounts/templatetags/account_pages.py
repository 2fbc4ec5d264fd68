"""Template tags of the owner's pages: a run's or step's state as a badge, without an include per table row."""

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

register = template.Library()

STATES = {
    "succeeded": _("succeeded"),
    "failed": _("failed"),
    "waiting": _("waiting"),
    "running": _("running"),
    "stopped": _("stopped"),
    "abandoned": _("abandoned"),
}


@register.simple_tag
def state_badge(status: str) -> str:
    """The state as the pages show one (.state--<status>), in the page's language; an unknown state as it is."""
    return format_html('<span class="state state--{}">{}</span>', status, STATES.get(status, status))
