"""manage.py import_automation FILE --owner USER: create or update an automation and print its public URLs."""

import json
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from automations import jsonsafe, services, signals
from automations.definition import InvalidDefinition
from automations.models import Automation
from automations.triggers import TriggerRefused


class Command(BaseCommand):
    help = (
        "Create or update (by owner and name) an automation from a definition document (- reads standard input) "
        "and print every public URL it has (webhook, web service, form, chat widget and its embed tag, approval link)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="path of the JSON definition document, or - for standard input")
        parser.add_argument("--owner", required=True, help="username of the account that owns it")
        parser.add_argument("--name", help="the automation's name (default: the document's name)")
        parser.add_argument("--on", action="store_true", help="turn it on (replays deliveries kept while it was off)")

    def handle(self, *args, file, owner, name, on, **options):
        document = self._read(file)
        name = name or (document.get("name") if isinstance(document, dict) else None)
        if not name:
            raise CommandError('give the automation a name: --name, or "name" in the document')
        longest = Automation._meta.get_field("name").max_length
        if not isinstance(name, str) or len(name) > longest or jsonsafe.unstorable(name):
            raise CommandError(f"the name must be text of at most {longest} characters, without NUL; nothing changed")
        user = get_user_model().objects.filter(username=owner).first()
        if user is None:
            raise CommandError(f"no user named {owner!r}")
        matches = list(Automation.objects.filter(owner=user, name=name)[:2])
        if len(matches) > 1:
            raise CommandError(f"{owner} has several automations named {name!r}; rename one in admin first")
        try:
            if matches:
                automation = services.update_automation(automation=matches[0], definition=document)
                verb = "updated"
            else:
                automation = services.create_automation(owner=user, name=name, definition=document)
                verb = "created"
        except InvalidDefinition as error:
            raise CommandError("the document was rejected; nothing changed:\n" + "\n".join(error.errors)) from None
        except TriggerRefused as refusal:  # its new trigger, on an automation that is on
            raise CommandError(f"its trigger refused: {refusal}; nothing changed") from None
        if on:
            try:
                services.turn_on(automation=automation)
            except TriggerRefused as refusal:
                raise CommandError(
                    f"{verb} automation {automation.pk} {name!r}, left off: its trigger refused: {refusal}"
                ) from None
        self.stdout.write(f"{verb} automation {automation.pk} {name!r} ({'on' if automation.enabled else 'off'})")
        # Every URL the pages serve it too (approval link, chat embed tag): the pages' list (automations/signals.py).
        lines = signals.answer(signals.public_urls, automation=automation)
        if lines is None:
            lines = [f"{label + ':':<16} {url}" for label, url in services.public_urls(automation)]
        for line in lines:
            self.stdout.write(line)

    def _read(self, file):
        try:
            if file == "-":
                return json.load(sys.stdin)
            with open(file, encoding="utf-8") as handle:
                return json.load(handle)
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{file}: not UTF-8 text") from None
        except (json.JSONDecodeError, RecursionError) as error:
            raise CommandError(f"{file}: not JSON: {error or 'nested too deep'}") from None
