"""Public keys are credentials (DESIGN.md contracts 3 and 7): issued, found by one lookup, retired, never in clear."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from automations import services as automation_services
from publickeys import crypto, selectors, services
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db

Purpose = PublicKey.Purpose


@pytest.fixture
def target(make_automation):
    """An automation: the model whose rows have webhook and web service keys today."""
    return make_automation([])


def test_keys_carry_at_least_128_random_bits():
    issued = {crypto.new_key() for _ in range(1000)}
    assert len(issued) == 1000
    assert all(len(key) >= 22 for key in issued)  # 22 URL-safe characters hold 132 bits; ours hold 192
    assert crypto.KEY_BYTES * 8 >= 128


def test_an_issued_key_finds_its_target(target):
    key = services.issue_key(purpose=Purpose.FORM, target=target)
    assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key) == target.pk
    assert selectors.key_of(purpose=Purpose.FORM, target=target) == key


def test_the_database_holds_no_working_key(target):
    key = services.issue_key(purpose=Purpose.CHAT_WIDGET, target=target)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {PublicKey._meta.db_table}")
        table = " ".join(map(str, cursor.fetchall()))
    assert crypto.digest(key) in table
    assert key not in table


def test_another_secret_neither_finds_nor_reveals_the_keys(target, settings):
    key = services.issue_key(purpose=Purpose.FORM, target=target)
    settings.URL_KEY_SECRET = "a-different-secret"
    assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key) is None
    assert selectors.key_of(purpose=Purpose.FORM, target=target) is None
    assert selectors.url_of(purpose=Purpose.FORM, target=target) is None


def test_issuing_again_retires_the_previous_key(target):
    old = services.issue_key(purpose=Purpose.APPROVAL_QUEUE, target=target)
    new = services.issue_key(purpose=Purpose.APPROVAL_QUEUE, target=target)
    assert selectors.target_id_for_key(purpose=Purpose.APPROVAL_QUEUE, key=old) is None
    assert selectors.target_id_for_key(purpose=Purpose.APPROVAL_QUEUE, key=new) == target.pk
    retired = PublicKey.objects.get(digest=crypto.digest(old))
    assert retired.retired_at is not None and retired.sealed == ""  # nothing left to unseal
    assert selectors.key_of(purpose=Purpose.APPROVAL_QUEUE, target=target) == new


def test_a_key_finds_nothing_under_another_purpose(target):
    key = services.issue_key(purpose=Purpose.FORM, target=target)
    for purpose in Purpose.values:
        if purpose != Purpose.FORM:
            assert selectors.target_id_for_key(purpose=purpose, key=key) is None, purpose


def test_a_deleted_targets_keys_go_with_it(target):
    services.issue_key(purpose=Purpose.FORM_SESSION, target=target)
    assert PublicKey.objects.filter(target_id=target.pk).count() == 3  # with its webhook and web service keys
    automation_services.delete_automation(automation=target)
    assert not PublicKey.objects.exists()


def test_a_target_has_one_live_key_per_purpose(target):
    live = PublicKey.objects.get(target_id=target.pk, purpose=Purpose.WEBHOOK)
    with pytest.raises(IntegrityError), transaction.atomic():
        PublicKey.objects.create(
            purpose=Purpose.WEBHOOK, digest="0" * 64, sealed="", target_type=live.target_type, target_id=target.pk
        )


def test_a_purpose_that_does_not_exist_is_refused(target):
    with pytest.raises(ValueError):
        services.issue_key(purpose="carrier_pigeon", target=target)


@pytest.mark.parametrize(
    ("purpose", "shape"),
    [
        (Purpose.WEBHOOK, "https://hooks.example.com/automation-{key}"),
        (Purpose.WEB_SERVICE, "https://hooks.example.com/webservice-{key}"),
        (Purpose.FORM, "https://app.example.com/form/{key}"),
        (Purpose.ONE_TIME_FORM, "https://app.example.com/form/s/{key}"),
        (Purpose.FORM_SESSION, "https://app.example.com/form/run/{key}"),
        (Purpose.CHAT_WIDGET, "https://app.example.com/webchat/{key}"),
        (Purpose.APPROVAL_QUEUE, "https://app.example.com/moderation?queue={key}"),
    ],
)
def test_the_url_of_each_purpose_has_the_shape_of_the_spec(target, settings, purpose, shape):
    settings.BASE_URL, settings.HOOKS_URL = "https://app.example.com", "https://hooks.example.com"
    key = services.issue_key(purpose=purpose, target=target)
    assert selectors.url_of(purpose=purpose, target=target) == shape.format(key=key)


def test_every_purpose_has_a_url_shape():
    assert set(selectors.URL_SHAPES) == set(Purpose)


def test_a_lone_surrogate_is_digested_rather_than_raising():
    assert len(crypto.digest("\ud800")) == 64
    assert crypto.digest("\ud800") != crypto.digest("?")


def test_only_the_first_characters_of_a_long_key_count():
    key = crypto.new_key()
    assert len(key) < crypto.MAX_KEY_LENGTH
    assert crypto.digest("a" * crypto.MAX_KEY_LENGTH) == crypto.digest("a" * crypto.MAX_KEY_LENGTH + "tail")


def test_a_key_with_an_expiry_works_until_then_and_then_misses_as_an_unknown_key(target):
    from datetime import timedelta

    from django.utils import timezone

    soon = services.issue_key(purpose="web_service", target=target, expires_at=timezone.now() + timedelta(hours=1))
    assert selectors.target_id_for_key(purpose="web_service", key=soon) == target.pk
    PublicKey.objects.filter(digest=crypto.digest(soon)).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert selectors.target_id_for_key(purpose="web_service", key=soon) is None


def test_a_key_found_is_remembered_only_when_asked_and_a_miss_never(target, django_assert_num_queries):
    key = services.issue_key(purpose=Purpose.FORM, target=target)
    with django_assert_num_queries(2):  # not asked to remember: a query each time
        selectors.target_id_for_key(purpose=Purpose.FORM, key=key)
        selectors.target_id_for_key(purpose=Purpose.FORM, key=key)
    assert selectors.remembered_target_id(purpose=Purpose.FORM, key=key) is None
    with django_assert_num_queries(1):
        for _ in range(3):
            assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key, remember_seconds=5) == target.pk
    assert selectors.remembered_target_id(purpose=Purpose.FORM, key=key) == target.pk
    assert selectors.remembered_target_id(purpose=Purpose.WEBHOOK, key=key) is None  # remembered by purpose
    with django_assert_num_queries(2):
        for _ in range(2):
            assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key + "x", remember_seconds=5) is None


def test_a_fresh_lookup_of_a_key_retired_meanwhile_forgets_it(target):
    key = services.issue_key(purpose=Purpose.FORM, target=target)
    assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key, remember_seconds=5) == target.pk
    PublicKey.objects.update(retired_at=timezone.now())
    assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key, remember_seconds=5) == target.pk  # remembered
    assert selectors.target_id_for_key(purpose=Purpose.FORM, key=key, remember_seconds=5, fresh=True) is None
    assert selectors.remembered_target_id(purpose=Purpose.FORM, key=key) is None
