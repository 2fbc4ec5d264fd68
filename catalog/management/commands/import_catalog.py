"""manage.py import_catalog FILE: create or update apps and operations from a catalog document."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from catalog.feed import build_feed
from catalog.importer import InvalidCatalog, import_catalog


class Command(BaseCommand):
    help = "Create or update apps and their operations from a JSON catalog document (- reads standard input)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="path of the JSON document, or - for standard input")
        parser.add_argument("--no-build", action="store_true", help="do not rebuild the feed afterwards")

    def handle(self, *args, file, no_build, **options):
        try:
            if file == "-":
                document = json.load(sys.stdin)
            else:
                with open(file, encoding="utf-8") as handle:
                    document = json.load(handle)
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{file}: not UTF-8 text") from None
        except (json.JSONDecodeError, RecursionError) as error:
            raise CommandError(f"{file}: not JSON: {error or 'nested too deep'}") from None
        try:
            report = import_catalog(document)
        except InvalidCatalog as error:
            raise CommandError("the document was rejected; nothing changed:\n" + "\n".join(error.errors)) from None
        self.stdout.write(
            f"apps: {len(report.created)} created, {len(report.updated)} updated, {len(report.unchanged)} unchanged; "
            f"operations: {report.operations_created} created, {report.operations_updated} updated, "
            f"{report.operations_deleted} deleted"
        )
        for label, slugs in (("created", report.created), ("updated", report.updated)):
            if slugs and options["verbosity"] > 1:
                self.stdout.write(f"{label}: {', '.join(slugs)}")
        if not no_build:
            build = build_feed()
            self.stdout.write(f"feed: {build.count} apps{' (rebuilt)' if build.changed else ' (unchanged)'}")
