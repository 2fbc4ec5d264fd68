"""manage.py build_feed: rebuild the stored feed list and detail bodies now."""

from django.core.management.base import BaseCommand

from catalog.feed import build_feed


class Command(BaseCommand):
    help = "Rebuild the catalog feed's list and detail bodies from the catalog."

    def handle(self, *args, **options):
        build = build_feed()
        state = "rebuilt" if build.changed else "unchanged"
        written, removed = build.details_written, build.details_removed
        self.stdout.write(f"feed {state}: {build.count} apps, {written} details written, {removed} removed")
