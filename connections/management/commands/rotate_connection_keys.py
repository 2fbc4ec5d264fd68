"""manage.py rotate_connection_keys: re-seal every connection credential under the first CONNECTION_KEYS key."""

from django.core.management.base import BaseCommand

from connections import services


class Command(BaseCommand):
    help = (
        "Re-seal every connection credential under the first key of CONNECTION_KEYS. Run it after putting a new "
        "key first; once it reports no credential left unreadable, the older keys can be dropped."
    )

    def handle(self, *args, **options):
        done, unreadable = services.rotate_keys()
        self.stdout.write(f"{done} credential(s) re-sealed under the first key.")
        if unreadable:
            self.stderr.write(
                f"{unreadable} credential(s) opened under no key of CONNECTION_KEYS: their connections now need "
                "reconnection."
            )
