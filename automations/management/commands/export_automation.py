"""manage.py export_automation ID: write an automation's definition document, ready for import_automation."""

import json

from django.core.management.base import BaseCommand, CommandError

from automations import selectors
from automations.models import Automation


class Command(BaseCommand):
    help = "Write an automation's definition document (with its name) to standard output or --output FILE."

    def add_arguments(self, parser):
        parser.add_argument("id", type=int, help="the automation's id (shown in admin and by import_automation)")
        parser.add_argument("--output", help="write to this file instead of standard output")

    def handle(self, *args, id, output, **options):
        automation = Automation.objects.filter(pk=id).first()
        if automation is None:
            raise CommandError(f"no automation {id}")
        text = json.dumps(selectors.document_of(automation), indent=2, ensure_ascii=False) + "\n"
        if output:
            try:
                with open(output, "w", encoding="utf-8") as handle:
                    handle.write(text)
            except OSError as error:
                raise CommandError(f"cannot write {output}: {error.strerror}") from None
        else:
            self.stdout.write(text, ending="")
