"""A lookup table's cap is kept by its count row: exact under concurrent adds, and at the same cost at any size."""

import threading
import time
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from automations import lookup_tables, services
from automations.models import LookupRow, LookupTable
from automations.steps import StepFailed
from automations.steps import lookup_rows as step
from tests.races import at_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def cap(monkeypatch):
    monkeypatch.setattr(lookup_tables, "MAX_ROWS", 3)
    return 3


def act(automation, action: str, scope="automation", table="t", **settings):
    return step.run(
        {"table": table, "scope": scope, "action": action, **settings}, SimpleNamespace(automation=automation)
    )


def counted(automation, scope="automation", table="t") -> int:
    rows = LookupTable.objects.filter(owner=automation.owner, table=table)
    return rows.get(automation=automation if scope == "automation" else None).rows


def test_a_full_table_refuses_an_add_and_takes_one_again_after_a_delete(make_automation, cap):
    automation = make_automation([])
    for n in range(cap):
        act(automation, "add", values={"n": n})
    with pytest.raises(StepFailed, match="table 't' is full \\(3 rows\\)"):
        act(automation, "add", values={"n": 9})
    with pytest.raises(StepFailed, match="full"):
        act(automation, "upsert", match={"n": 9}, values={"x": 1})  # an upsert that matches nothing adds
    assert act(automation, "upsert", match={"n": 0}, values={"x": 1})["updated"] == 1  # one that matches does not

    assert act(automation, "delete", match={"n": 1}) == {"deleted": 1}
    assert counted(automation) == 2
    assert act(automation, "add", values={"n": 9})["added"] == 1
    assert LookupRow.objects.count() == cap == counted(automation)


def test_each_automation_and_the_account_count_their_own_tables(make_automation, cap):
    first, second = make_automation([]), make_automation([], name="second")
    for n in range(cap):
        act(first, "add", values={"n": n})
    act(second, "add", values={"n": 0})  # this automation's table "t" is another table
    act(first, "add", scope="account", values={"n": 0})
    act(second, "add", scope="account", values={"n": 1})  # the account's "t" is one table for both

    assert (counted(first), counted(second), counted(first, "account")) == (3, 1, 2)
    assert LookupTable.objects.count() == 3


def test_an_add_costs_the_same_statements_in_a_table_of_any_size(make_automation):
    automation = make_automation([])
    act(automation, "add", values={"n": 0})
    with CaptureQueriesContext(connection) as small:
        act(automation, "add", values={"n": 1})
    LookupRow.objects.bulk_create(
        LookupRow(owner=automation.owner, automation=automation, table="t") for _ in range(500)
    )
    with CaptureQueriesContext(connection) as large:
        act(automation, "add", values={"n": 2})

    statements = [query["sql"] for query in large.captured_queries]
    assert len(statements) == len(small.captured_queries)
    assert not [sql for sql in statements if "COUNT(" in sql.upper()]


def test_reset_clears_this_automations_counts_and_keeps_the_accounts(make_automation, cap):
    automation = make_automation([], enabled=False)
    for n in range(cap):
        act(automation, "add", values={"n": n})
        act(automation, "add", scope="account", values={"n": n})

    services.reset(automation=automation)

    assert act(automation, "add", values={"n": 0})["added"] == 1
    assert counted(automation) == 1
    with pytest.raises(StepFailed, match="full"):
        act(automation, "add", scope="account", values={"n": 9})


def test_deleting_an_automation_takes_its_counts_with_it(make_automation):
    automation = make_automation([])
    act(automation, "add", values={"n": 0})
    act(automation, "add", scope="account", values={"n": 0})

    services.delete_automation(automation=automation)

    assert list(LookupTable.objects.values_list("automation", "rows")) == [(None, 1)]


def test_rows_added_moved_and_deleted_in_admin_are_counted(staff_client, make_automation, cap):
    automation = make_automation([])
    for n in range(cap):
        act(automation, "add", values={"n": n})
    rows = list(LookupRow.objects.order_by("pk"))

    response = staff_client.post(
        "/admin/automations/lookuprow/",
        {"action": "delete_selected", "_selected_action": [row.pk for row in rows[:2]], "post": "yes"},
    )
    assert response.status_code == 302
    assert counted(automation) == 1

    change = {"owner": automation.owner.pk, "automation": "", "table": "t", "data": '{"n": 2}'}
    response = staff_client.post(f"/admin/automations/lookuprow/{rows[2].pk}/change/", change)
    assert response.status_code == 302  # moved to the account's table "t"
    assert (counted(automation), counted(automation, "account")) == (0, 1)

    response = staff_client.post(f"/admin/automations/lookuprow/{rows[2].pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert counted(automation, "account") == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(3))
def test_adds_racing_for_a_tables_last_places_never_pass_its_cap(make_automation, cap, attempt):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation([])
    act(automation, "add", values={"n": 0})

    def add():
        try:
            return act(automation, "add", values={"n": 1})["added"]
        except StepFailed:
            return 0

    assert sorted(at_once(*[add] * 6)) == [0] * 4 + [1] * 2
    assert LookupRow.objects.count() == cap == counted(automation)


BEFORE = [("automations", "0016_run_source_labels_translated")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_the_rows_of_every_table_there_is(make_automation):
    automation = make_automation([])
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        apps = executor.loader.project_state(BEFORE).apps
        row = apps.get_model("automations", "LookupRow")
        for table, scope, n in (("t", automation.pk, 3), ("t", None, 2), ("u", automation.pk, 1)):
            row.objects.bulk_create(
                row(owner_id=automation.owner_id, automation_id=scope, table=table, data={}) for _ in range(n)
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert set(LookupTable.objects.values_list("table", "automation", "rows")) == {
        ("t", automation.pk, 3),
        ("t", None, 2),
        ("u", automation.pk, 1),
    }


def test_a_table_full_by_a_count_that_drifted_counts_its_rows_before_it_refuses(make_automation, cap):
    automation = make_automation([])
    for n in range(cap):
        act(automation, "add", values={"n": n})
    LookupRow.objects.filter(data__n=0).delete()  # as a worker of a release before the counts would have

    assert act(automation, "add", values={"n": 9})["added"] == 1
    assert counted(automation) == cap == LookupRow.objects.count()
    with pytest.raises(StepFailed, match="full"):
        act(automation, "add", values={"n": 10})


def test_an_add_racing_a_reset_that_took_its_count_row_is_not_refused(make_automation, cap):
    automation = make_automation([])
    act(automation, "add", values={"n": 0})
    resets = [1]

    def reset_first(execute, sql, params, many, context):  # the reset lands between the add's read and its UPDATE
        if resets and sql.startswith('UPDATE "automations_lookuptable"'):
            resets.pop()
            LookupRow.objects.filter(automation=automation).delete()
            LookupTable.objects.filter(automation=automation).delete()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(reset_first):
        assert act(automation, "add", values={"n": 1})["added"] == 1
    assert not resets  # the reset did land there
    assert counted(automation) == 1 == LookupRow.objects.count()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(3))
def test_first_adds_racing_into_a_new_account_table_make_one_count_and_never_pass_its_cap(
    make_automation, cap, attempt
):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation([])

    def add():
        try:
            return act(automation, "add", scope="account", values={"n": 1})["added"]
        except StepFailed:
            return 0

    assert sorted(at_once(*[add] * 6)) == [0] * 3 + [1] * 3
    assert list(LookupTable.objects.values_list("automation", "rows")) == [(None, cap)]
    assert LookupRow.objects.count() == cap


WAITING_FOR_THE_TABLE = (  # backends of this test's database waiting for a lock in a statement on the count rows
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() "
    "AND query LIKE '%%automations_lookuptable%%'"
)


@pytest.mark.django_db(transaction=True)
def test_upserts_racing_with_one_new_key_add_one_row_and_update_it(make_automation):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation([])
    act(automation, "add", values={"email": "other@example.com"})  # the table and its count row exist
    upsert = {"match": {"email": "new@example.com"}}
    ended = []

    def both_upserts():
        ended.extend(
            at_once(*[lambda n=n: act(automation, "upsert", values={f"by_{n}": True}, **upsert) for n in (1, 2)])
        )

    racing = threading.Thread(target=both_upserts)
    with transaction.atomic():  # the count row held: both upserts start and wait, wherever each waits
        list(LookupTable.objects.filter(automation=automation).select_for_update())
        racing.start()
        for _ in range(200):
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_stat_clear_snapshot()")  # a transaction otherwise reads its first snapshot
                cursor.execute(WAITING_FOR_THE_TABLE)
                if cursor.fetchone()[0] >= 2:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("the upserts never waited for the table")
    racing.join(30)
    assert not racing.is_alive(), "the upserts did not end"

    assert sorted(next(iter(result)) for result in ended) == ["added", "updated"]
    row = LookupRow.objects.get(data__email="new@example.com")
    assert row.data == {"email": "new@example.com", "by_1": True, "by_2": True}
    assert counted(automation) == 2 == LookupRow.objects.count()
