"""`make run`'s demo automation: imported and turned on the first time only, its URLs printed at every start.

Run as `python -m config.demo_automation`. Every start used to import the
document again and turn the automation on, undoing what was changed in admin
since (turned off, steps edited). Now an automation of the demo's name owned
by `admin` is left as it is; one deleted in admin comes back at the next start.
"""

import json
import os
import sys
from pathlib import Path

DOCUMENT = Path(__file__).resolve().parent.parent / "automations" / "demo" / "record-and-answer.json"
OWNER = "admin"


def ensure_demo_automation(out=sys.stdout) -> None:
    from django.core.management import call_command

    from automations import services
    from automations.models import Automation

    name = json.loads(DOCUMENT.read_text(encoding="utf-8"))["name"]
    existing = Automation.objects.filter(owner__username=OWNER, name=name).first()
    if existing is None:
        call_command("import_automation", str(DOCUMENT), owner=OWNER, on=True, stdout=out)
        return
    state = "on" if existing.enabled else "off"
    out.write(f"demo automation {existing.pk} {name!r} ({state}): imported before, left as it is\n")
    out.write(f"webhook URL:     {services.hook_url(existing)}\n")
    out.write(f"web service URL: {services.web_service_url(existing)}\n")


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    ensure_demo_automation()


if __name__ == "__main__":
    main()
