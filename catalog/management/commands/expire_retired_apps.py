"""manage.py expire_retired_apps: drop apps past their retirement window from the feed now."""

from django.core.management.base import BaseCommand

from catalog.retirement import expire_retired_apps


class Command(BaseCommand):
    help = "Remove apps whose retirement window has passed from the feed (beat runs this hourly)."

    def handle(self, *args, **options):
        dropped = expire_retired_apps()
        self.stdout.write(f"dropped {len(dropped)} apps" + (f": {', '.join(dropped)}" if dropped else ""))
