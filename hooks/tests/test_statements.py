"""The raw SQL of deliveries (hooks/statements.py) names every field of Delivery, and does what the ORM would."""

import dataclasses
from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from automations.models import Run
from hooks import deliveries, intake, services, statements
from hooks.incoming import Incoming
from hooks.models import Delivery

pytestmark = pytest.mark.django_db


def test_a_new_deliverys_columns_are_every_field_of_delivery_once():
    named = [*statements.ACCEPTED, *statements.STARTING, *statements.LEFT_TO_THE_TABLE]
    assert sorted(named) == sorted(field.name for field in Delivery._meta.concrete_fields)
    assert len(named) == len(set(named))


def test_what_is_left_to_the_table_is_its_key_null_or_its_own_default():
    for name in statements.LEFT_TO_THE_TABLE:
        field = Delivery._meta.get_field(name)
        assert field.primary_key or field.null or field.has_db_default(), name


def test_an_accepted_request_has_one_attribute_per_accepted_column():
    attributes = {field.name for field in dataclasses.fields(intake.Accepted)}
    assert attributes == {Delivery._meta.get_field(name).attname for name in statements.ACCEPTED} | {"pk"}


def test_an_inserted_delivery_reads_back_as_one_the_orm_created(make_automation):
    automation = make_automation([])
    row = intake.Accepted(
        automation_id=automation.pk,
        method="POST",
        path="/automation-{key}",
        query_string="a=1",
        content_type="application/json",
        body=b"{}",
        body_digest="0" * 64,
    )
    statements.insert_deliveries([row])
    made = Delivery.objects.create(
        automation=automation,
        method="POST",
        path="/automation-{key}",
        query_string="a=1",
        content_type="application/json",
        body=b"{}",
        body_digest="0" * 64,
    )
    inserted = Delivery.objects.get(pk=row.pk)
    different = {
        field.name
        for field in Delivery._meta.concrete_fields
        if getattr(inserted, field.attname) != getattr(made, field.attname)
    }
    assert different == {"id", "public_id", "received_at"}
    assert inserted.public_id == row.public_id
    # The database's clock, stored as Django stores an aware datetime (on SQLite, text in UTC).
    assert abs(inserted.received_at - timezone.now()) < timedelta(hours=1)


def stored_delivery(automation, *, digest="1" * 64, run=None) -> Delivery:
    return Delivery.objects.create(
        automation=automation, method="POST", path="/", body=b"{}", body_digest=digest, run=run
    )


def the_orm_query(delivery: Delivery, since) -> int | None:
    """The duplicate check as the ORM wrote it before it was built once per process (hooks.deliveries)."""
    earlier = (
        Delivery.objects.filter(automation_id=delivery.automation_id, body_digest=delivery.body_digest)
        .exclude(pk=delivery.pk)
        .values("run")
    )
    return (
        Run.objects.filter(Q(pk__in=earlier) | Q(retry_of__in=earlier))
        .filter(
            Q(status__in=deliveries.COMPLETED, finished_at__gte=since)
            | (Q(status=Run.Status.WAITING, started_at__gte=since) & ~Q(waiting_for__kind="start"))
        )
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )


def earlier_delivery(automation, status, *, started_ago=0, finished_ago=0, digest="1" * 64, kind=None) -> Delivery:
    now = timezone.now()
    finished = None if status in (Run.Status.WAITING, Run.Status.RUNNING) else now - timedelta(seconds=finished_ago)
    waiting_for = {"kind": kind, "step": ""} if kind else None
    run = Run.objects.create(automation=automation, status=status, finished_at=finished, waiting_for=waiting_for)
    Run.objects.filter(pk=run.pk).update(started_at=now - timedelta(seconds=started_ago))
    return stored_delivery(automation, digest=digest, run=run)


EARLIER = {
    "succeeded in the window": {"status": Run.Status.SUCCEEDED, "finished_ago": 10, "started_ago": 500},
    "stopped in the window": {"status": Run.Status.STOPPED, "finished_ago": 10},
    "succeeded before the window": {"status": Run.Status.SUCCEEDED, "finished_ago": 120},
    "failed in the window": {"status": Run.Status.FAILED, "finished_ago": 10},
    "abandoned in the window": {"status": Run.Status.ABANDONED, "finished_ago": 10},
    "running": {"status": Run.Status.RUNNING, "started_ago": 10},
    "waiting, started in the window": {"status": Run.Status.WAITING, "started_ago": 10, "kind": "delay"},
    "queued, not started yet": {"status": Run.Status.WAITING, "started_ago": 10, "kind": "start"},
    "waiting, started before the window": {"status": Run.Status.WAITING, "started_ago": 120},
    "another body": {"status": Run.Status.SUCCEEDED, "finished_ago": 10, "digest": "2" * 64},
}


@pytest.mark.parametrize("earlier", [*EARLIER, "all of them"])
def test_the_duplicate_check_finds_the_run_the_orm_query_finds(make_automation, earlier):
    automation, other = make_automation([]), make_automation([], name="other")
    for name, row in EARLIER.items():
        if earlier in (name, "all of them"):
            earlier_delivery(automation, **row)
    earlier_delivery(other, Run.Status.SUCCEEDED, finished_ago=10)  # the same body to another automation
    delivery = stored_delivery(automation)
    since = timezone.now() - timedelta(seconds=60)
    found = statements.original_run(
        delivery, completed=deliveries.COMPLETED, waiting=Run.Status.WAITING, since=since, queued="start"
    )
    assert found == the_orm_query(delivery, since)
    expected = {"succeeded in the window", "stopped in the window", "waiting, started in the window", "all of them"}
    assert (found is not None) == (earlier in expected)


def test_the_duplicate_check_never_finds_the_deliverys_own_run(make_automation):
    automation = make_automation([])
    delivery = earlier_delivery(automation, Run.Status.SUCCEEDED, finished_ago=1)
    since = timezone.now() - timedelta(seconds=60)
    assert (
        statements.original_run(
            delivery, completed=deliveries.COMPLETED, waiting=Run.Status.WAITING, since=since, queued="start"
        )
        is None
    )


def test_the_duplicate_check_is_built_once_per_process(make_automation):
    automation = make_automation([], settings={"suppress_duplicates": True})

    def process(body: bytes) -> None:
        incoming = Incoming("POST", "/", "", "application/json", body)
        delivery = services.accept_delivery(automation_id=automation.pk, incoming=incoming)
        deliveries.process_delivery(delivery_id=delivery.pk)

    process(b'{"n": 1}')
    before = statements.original_run_sql.cache_info().misses
    process(b'{"n": 2}')
    assert statements.original_run_sql.cache_info().misses == before
    assert Delivery.objects.filter(status=Delivery.Status.DONE).count() == 2


def test_the_duplicate_check_finds_the_retry_that_succeeded_after_the_first_attempt_failed(make_automation):
    automation = make_automation([])
    first = earlier_delivery(automation, Run.Status.FAILED, finished_ago=20)
    retry = Run.objects.create(
        automation=automation, status=Run.Status.SUCCEEDED, finished_at=timezone.now(), attempt=2, retry_of=first.run
    )
    delivery = stored_delivery(automation)
    since = timezone.now() - timedelta(seconds=60)
    found = statements.original_run(
        delivery, completed=deliveries.COMPLETED, waiting=Run.Status.WAITING, since=since, queued="start"
    )
    assert found == retry.pk == the_orm_query(delivery, since)
