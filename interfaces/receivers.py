"""What the pages answer when automations asks or tells (automations/signals.py), connected in AppConfig.ready()."""

from interfaces import public_urls as listing
from interfaces.approvals import queues
from interfaces.chat import conversations
from interfaces.forms import selectors, uploads
from interfaces.whitelabel import domains
from publickeys.models import PublicKey

# Hosted form and chat widget URLs are issued on the owner's white-label domain, when it has one.
ON_OWNERS_DOMAIN = (PublicKey.Purpose.FORM, PublicKey.Purpose.CHAT_WIDGET)


def place_approval_item(sender, *, run, title: str, text: str, details, expires_at, **_) -> dict:
    return queues.place_item(run=run, title=title, text=text, details=details, expires_at=expires_at)


def chat_reply(sender, *, conversation_id: str, text: str, **_) -> dict | None:
    return conversations.reply(conversation_id=conversation_id, text=text)


def url_origin(sender, *, purpose: str, owner_id: int, **_) -> str | None:
    return domains.public_base_url(owner_id) if purpose in ON_OWNERS_DOMAIN else None


def public_urls(sender, *, automation, **_) -> list[str]:
    listing.prepare(automation)
    return listing.printed(listing.public_urls(automation))


def delete_files(sender, *, automation, **_) -> None:
    """A deleted automation's form files leave the storage with it."""
    uploads.delete_files_of(automation)


def forget_forms(sender, **_) -> None:
    """Hosted forms remembered by this process are read again after any change of an automation."""
    selectors.forget_form_automations()
