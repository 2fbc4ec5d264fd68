"""`make run`'s demo automation: imported and turned on at the first start only; later starts print its URLs."""

import io

import pytest

from automations import services
from automations.models import Automation
from config.demo_automation import ensure_demo_automation
from config.first_admin import ensure_first_admin

pytestmark = pytest.mark.django_db


def _start() -> str:
    out = io.StringIO()
    ensure_demo_automation(out)
    return out.getvalue()


def _urls(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("webhook URL:", "web service URL:"))]


def test_the_first_start_imports_the_demo_and_turns_it_on():
    ensure_first_admin()
    output = _start()
    demo = Automation.objects.get()
    assert demo.enabled
    assert f"created automation {demo.pk}" in output
    assert _urls(output) == [
        f"webhook URL:     {services.hook_url(demo)}",
        f"web service URL: {services.web_service_url(demo)}",
    ]


def test_a_later_start_leaves_the_demo_as_admin_left_it_and_prints_the_same_urls():
    ensure_first_admin()
    first = _start()
    demo = Automation.objects.get()
    services.turn_off(automation=demo)
    later = _start()
    demo.refresh_from_db()
    assert not demo.enabled
    assert Automation.objects.count() == 1
    assert f"demo automation {demo.pk} 'Demo: record and answer' (off): imported before, left as it is" in later
    assert _urls(later) == _urls(first)
