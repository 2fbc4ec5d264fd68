"""An automation's public URLs, each with its label: what the import command prints and the owner's pages show.

The one list lives here, in interfaces, because two of its entries are the
pages' own (the approval queue's link, the chat widget's embed script) and
the form and chat URLs are issued on the owner's white-label domain, which
interfaces keeps. automations may not import interfaces (STYLE.md 9), and
publickeys builds on Django alone, so neither could hold it: automations'
import command asks for it through automations.signals.public_urls
(answered in interfaces/receivers.py), and pages call public_urls() here.
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from automations import services
from interfaces.approvals import queues
from interfaces.models import ApprovalQueue
from publickeys.services import issue_key


@dataclass(frozen=True)
class PublicUrl:
    kind: str  # webhook, web_service, form, chat_widget, chat_embed, approval_queue
    label: Promise  # translatable; English where a command prints it
    url: str
    snippet: str = ""  # what to paste instead of the URL: the chat widget's <script> tag

    @property
    def text(self) -> str:
        """What to show or print: the snippet when there is one, else the URL."""
        return self.snippet or self.url


def embed_tag(widget_url: str) -> str:
    """The tag that puts the chat widget on any page: its embed script, on the widget's own origin."""
    base, _slash, key = widget_url.rpartition("/")
    return f'<script src="{base}/embed.js?key={key}" defer></script>'


def public_urls(automation) -> list[PublicUrl]:
    """Every public URL the automation has now, in this order: webhook, web service, hosted form, chat widget, its
    embed tag, approval link. Reads only: an approval link appears once its queue exists (prepare() below, or the
    first approval step that runs). A URL whose key was sealed under another URL_KEY_SECRET is left out."""
    found = [
        PublicUrl("webhook", _("webhook URL"), services.hook_url(automation) or ""),
        PublicUrl("web_service", _("web service URL"), services.web_service_url(automation) or ""),
        PublicUrl("form", _("form URL"), services.form_url(automation) or ""),
    ]
    if widget := services.chat_widget_url(automation):
        found.append(PublicUrl("chat_widget", _("chat widget URL"), widget))
        found.append(PublicUrl("chat_embed", _("chat embed tag"), widget, snippet=embed_tag(widget)))
    queue = ApprovalQueue.objects.filter(automation=automation).first()
    if queue is not None:
        found.append(PublicUrl("approval_queue", _("approval link"), queues.approval_url(queue) or ""))
    return [url for url in found if url.url]


def has_approval_step(automation) -> bool:
    return any(step.get("kind") == "approval" for step in automation.definition.get("steps", []))


def prepare(automation) -> None:
    """Make the approval link of an automation with an approval step now, so that it can be handed out before the
    first item arrives; a link sealed under another URL_KEY_SECRET is issued anew (the old one no longer works)."""
    if not has_approval_step(automation):
        return
    queue = queues.queue_of(automation)
    if queues.approval_url(queue) is None:
        issue_key(purpose=queues.PURPOSE, target=queue)


def printed(urls: list[PublicUrl]) -> list[str]:
    """The lines a command prints: each label and its URL (or snippet), aligned."""
    return [f"{str(url.label) + ':':<16} {url.text}" for url in urls]
