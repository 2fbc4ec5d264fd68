"""`make run`'s demo automations: imported and turned on the first time only, their URLs printed at every start.

Run as `python -m interfaces.demo_automations`. An automation of the demo's name
owned by `admin` is left as it is, so that what was changed in admin (turned
off, steps edited) outlives a restart; one deleted in admin comes back at the
next start.

The demos: record and answer (webhook and web service), an approval flow
whose approval link is printed too (its queue is made at once, so the link
works before the first item arrives), a contact form that asks its visitor
one more question on the session page, and a chat widget that answers, with
the tag that embeds it. Each one's URLs are printed as import_automation
prints them (interfaces/public_urls.py).
"""

import json
import os
import sys
from pathlib import Path

DEMOS = Path(__file__).resolve().parent.parent / "automations" / "demo"
DOCUMENT = DEMOS / "record-and-answer.json"
APPROVAL_DOCUMENT = DEMOS / "approve-a-refund.json"
FORM_DOCUMENT = DEMOS / "contact-form.json"
CHAT_DOCUMENT = DEMOS / "chat-helper.json"
OWNER = "admin"


def ensure_demo_automation(out=sys.stdout) -> None:
    _ensure(DOCUMENT, out)
    approval_demo = _ensure(APPROVAL_DOCUMENT, out)
    _print_approval_hint(approval_demo, out)
    _ensure(FORM_DOCUMENT, out)
    _ensure(CHAT_DOCUMENT, out)


def _ensure(document: Path, out):
    from django.core.management import call_command

    from automations import services, triggers
    from automations.models import Automation
    from interfaces import public_urls

    name = json.loads(document.read_text(encoding="utf-8"))["name"]
    existing = Automation.objects.filter(owner__username=OWNER, name=name).first()
    if existing is None:
        call_command("import_automation", str(document), owner=OWNER, on=True, stdout=out)
        return Automation.objects.get(owner__username=OWNER, name=name)
    state = "on" if existing.enabled else "off"
    out.write(f"demo automation {existing.pk} {name!r} ({state}): imported before, left as it is\n")
    if len(services.public_urls(existing)) < len(triggers.of(existing).URLS):
        # Sealed under another SECRET_KEY or URL_KEY_SECRET, its keys no longer work: demo data gets new ones.
        services.issue_new_urls(automation=existing)
        out.write("  its URLs were made under another SECRET_KEY or URL_KEY_SECRET: new ones issued\n")
    public_urls.prepare(existing)  # an approval link made under another secret is issued anew, as the URLs above
    for line in public_urls.printed(public_urls.public_urls(existing)):
        out.write(f"{line}\n")
    return existing


def _print_approval_hint(automation, out) -> None:
    from automations import services

    out.write(
        '  ask for an approval: curl -d \'{"order": 42, "customer": "Ada", "amount": 30}\' '
        f"{services.hook_url(automation)}\n"
    )


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    ensure_demo_automation()


if __name__ == "__main__":
    main()
