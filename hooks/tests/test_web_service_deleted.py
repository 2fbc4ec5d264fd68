"""A web service whose automation is deleted while the call is under way answers 404 and counts nothing."""

from urllib.parse import urlsplit

import pytest
from django.test import Client

from automations import engine, runs
from automations import services as automation_services
from automations.models import Automation, Run, WebServiceUsage

pytestmark = pytest.mark.django_db(transaction=True)  # foreign keys are checked when each statement commits


def test_a_web_service_deleted_mid_call_answers_404_and_gives_its_quota_back(make_automation, monkeypatch):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "hi"}])
    path = urlsplit(automation_services.web_service_url(automation)).path
    real_start_run = runs.start

    def deleted_first(**kwargs):
        Automation.objects.filter(pk=automation.pk).delete()
        return real_start_run(**kwargs)

    monkeypatch.setattr(runs, "start", deleted_first)
    response = Client(raise_request_exception=False).post(path, data=b"{}", content_type="application/json")
    assert (response.status_code, response.content) == (404, b"web service not found")
    assert not Run.objects.exists()
    assert not WebServiceUsage.objects.filter(calls__gt=0).exists()


def test_a_web_service_deleted_while_its_run_goes_on_answers_404_and_gives_its_quota_back(make_automation, monkeypatch):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "hi"}])
    path = urlsplit(automation_services.web_service_url(automation)).path
    real_advance = engine.advance

    def deleted_meanwhile(run, **kwargs):
        answer = real_advance(run, **kwargs)
        Automation.objects.filter(pk=automation.pk).delete()
        return answer

    monkeypatch.setattr(engine, "advance", deleted_meanwhile)
    response = Client(raise_request_exception=False).post(path, data=b"{}", content_type="application/json")
    assert (response.status_code, response.content) == (404, b"web service not found")
    assert not WebServiceUsage.objects.filter(calls__gt=0).exists()
