"""The maintenance switch: read from the database at most once per CHECK_SECONDS per process."""

import pytest
from django.db import DatabaseError

from edge import process_cache
from hooks import maintenance
from hooks.models import Maintenance

pytestmark = pytest.mark.django_db


@pytest.fixture
def clock(manual_clock, monkeypatch):
    monkeypatch.setattr(process_cache.registered("hooks.maintenance"), "clock", manual_clock)
    return manual_clock


class Unreadable:
    def filter(self, *args, **kwargs):
        raise DatabaseError("down")


def test_the_switch_is_read_once_per_check_interval(clock, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert maintenance.active() is False
        assert maintenance.active() is False
    Maintenance.objects.create(active=True)
    clock.now += maintenance.CHECK_SECONDS - 0.1
    with django_assert_num_queries(0):
        assert maintenance.active() is False
        assert maintenance.known() is False
    clock.now += 0.1
    assert maintenance.known() is None  # due: an event loop hands the read to a thread
    with django_assert_num_queries(1):
        assert maintenance.active() is True


def test_a_database_that_cannot_be_read_keeps_the_last_answer_for_another_interval(clock, monkeypatch):
    Maintenance.objects.create(active=True)
    assert maintenance.active() is True
    clock.now += maintenance.CHECK_SECONDS
    monkeypatch.setattr(Maintenance, "objects", Unreadable())
    assert maintenance.active() is True
    assert maintenance.known() is True


def test_reset_reads_the_switch_afresh_and_keeps_the_last_answer_if_it_cannot(clock, monkeypatch):
    Maintenance.objects.create(active=True)
    assert maintenance.active() is True
    maintenance.reset()
    assert maintenance.known() is None
    monkeypatch.setattr(Maintenance, "objects", Unreadable())
    assert maintenance.active() is True
