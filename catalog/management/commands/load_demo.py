"""manage.py load_demo: import the generated demo catalog and build the feed and bulk artifact."""

import argparse
import json

from django.core.management.base import BaseCommand, CommandError

from catalog.bulk import build_bulk
from catalog.demo import demo_document
from catalog.feed import build_feed
from catalog.importer import import_catalog
from catalog.models import App


def at_least(minimum: int):
    def number(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more")
        return value

    return number


class Command(BaseCommand):
    help = "Load a generated demo catalog (idempotent), then build the feed and the bulk artifact."

    def add_arguments(self, parser):
        parser.add_argument("--apps", type=at_least(1), default=240, help="number of apps (default 240)")
        parser.add_argument("--operations", type=at_least(0), default=None, help="operations per app (default 4 to 12)")
        parser.add_argument("--write", metavar="FILE", help="only write the document to FILE, import nothing")
        parser.add_argument(
            "--first-time",
            action="store_true",
            help="import only into an empty catalog, so that staff's edits in admin stay (make run)",
        )

    def handle(self, *args, apps, operations, write, first_time, **options):
        document = demo_document(apps=apps, operations=operations)
        if write:
            try:
                with open(write, "w", encoding="utf-8") as handle:
                    json.dump(document, handle, indent=1)
            except OSError as error:
                raise CommandError(f"cannot write {write}: {error.strerror}") from None
            self.stdout.write(f"wrote {apps} demo apps to {write}")
            return
        if first_time and App.objects.exists():
            self.stdout.write("demo catalog: loaded before, left as admin left it")
        else:
            report = import_catalog(document)
            counts = f"{len(report.created)} created, {len(report.updated)} updated, {len(report.unchanged)} unchanged"
            self.stdout.write(f"demo catalog: {counts}")
        self.stdout.write(f"feed: {build_feed().count} apps; bulk: {build_bulk().count} apps")
