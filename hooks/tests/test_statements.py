"""The raw SQL of deliveries (hooks/statements.py) names every field of Delivery, and stores what the ORM would."""

import dataclasses
from datetime import timedelta

import pytest
from django.utils import timezone

from hooks import intake, statements
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
