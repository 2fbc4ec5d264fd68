"""A web service whose automation is deleted while the call is under way answers 404 and counts nothing."""

from urllib.parse import urlsplit

import pytest
from django.test import Client

from automations import engine, runs
from automations import services as automation_services
from automations.models import Automation, Run, WebServiceUsage
from hooks import webservice

pytestmark = pytest.mark.django_db(transaction=True)  # foreign keys are checked when each statement commits


def test_a_web_service_deleted_after_it_was_found_answers_404_and_counts_nothing(make_automation, monkeypatch):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "hi"}])
    path = urlsplit(automation_services.web_service_url(automation)).path
    real_trigger_data = webservice.trigger_data

    def deleted_first(**kwargs):  # by another request, committed before this call's run starts
        Automation.objects.filter(pk=automation.pk).delete()
        return real_trigger_data(**kwargs)

    monkeypatch.setattr(webservice, "trigger_data", deleted_first)
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


def test_a_run_that_cannot_start_leaves_no_count_to_give_back(make_automation, monkeypatch):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "hi"}])
    path = urlsplit(automation_services.web_service_url(automation)).path
    given_back = []
    monkeypatch.setattr(runs, "start", lambda **kwargs: 1 / 0)  # after the count, in its transaction
    monkeypatch.setattr(automation_services, "uncount_web_service_call", lambda **kwargs: given_back.append(kwargs))
    response = Client(raise_request_exception=False).post(path, data=b"{}", content_type="application/json")
    assert response.status_code == 500
    assert not WebServiceUsage.objects.filter(calls__gt=0).exists()  # rolled back with the run's start
    assert given_back == []
