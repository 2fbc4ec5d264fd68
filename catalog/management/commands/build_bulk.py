"""manage.py build_bulk: build the bulk artifact now (beat builds it daily at 04:00 UTC)."""

from django.core.management.base import BaseCommand, CommandError

from catalog.bulk import build_bulk


class Command(BaseCommand):
    help = "Build the /catalog/v1/bulk artifact from the catalog."

    def handle(self, *args, **options):
        build = build_bulk()
        if not build.built:
            raise CommandError("no connectable app: the previous artifact, if any, was kept")
        self.stdout.write(f"bulk built: {build.count} apps, {build.size} bytes")
