"""The definition document: one schema, every error with its path."""

import pytest

from automations.definition import InvalidDefinition, errors, validate


def doc(*steps, **extra):
    return {"trigger": {"type": "webhook"}, "steps": list(steps), **extra}


def test_a_valid_document_passes_unchanged():
    document = doc(
        {
            "id": "only_paid",
            "kind": "condition",
            "all": [{"left": "{{trigger.body.status}}", "op": "equals", "right": "paid"}],
        },
        {"id": "who", "kind": "set_values", "values": {"email": "{{trigger.body.customer.email}}"}},
        {
            "id": "call",
            "kind": "http_request",
            "method": "POST",
            "url": "https://api.example/x",
            "json": {"e": "{{steps.who.email}}"},
        },
        {
            "id": "row",
            "kind": "lookup_rows",
            "table": "customers",
            "scope": "account",
            "action": "upsert",
            "match": {"email": "{{steps.who.email}}"},
            "values": {"seen": True},
        },
        {"id": "answer", "kind": "respond", "status": 200, "body": {"ok": True}},
        settings={"suppress_duplicates": False, "retries": {"max_attempts": 5, "backoff_seconds": 10}},
    )
    assert validate(document) is document


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"steps": []}, "$: 'trigger' is a required property"),
        (doc(extra=1), "$: Additional properties are not allowed ('extra' was unexpected)"),
        (doc({"id": "a", "kind": "teleport"}), "$.steps[0].kind: 'teleport' is not one of"),
        (doc({"id": "Bad Id", "kind": "respond"}), "$.steps[0].id: 'Bad Id' does not match"),
        (doc({"id": "a", "kind": "http_request"}), "$.steps[0]: 'url' is a required property"),
        (doc({"id": "a", "kind": "respond", "status": 99}), "$.steps[0].status: 99 is less than the minimum of 200"),
        (
            doc({"id": "a", "kind": "respond", "colour": "red"}),
            "$.steps[0]: Additional properties are not allowed ('colour' was unexpected)",
        ),
        (
            doc({"id": "a", "kind": "respond"}, {"id": "a", "kind": "respond"}),
            "$.steps[1].id: 'a' is the id of an earlier step",
        ),
        (
            doc({"id": "a", "kind": "respond", "body": "{{steps.later.x}}"}, {"id": "later", "kind": "respond"}),
            "$.steps[0]: {{steps.later.x}} refers to no earlier step",
        ),
        (
            doc({"id": "a", "kind": "respond", "body": "{{secrets.token}}"}),
            "$.steps[0]: {{secrets.token}} must start with trigger. or steps.",
        ),
        (
            doc({"id": "l", "kind": "lookup_rows", "table": "t", "action": "upsert", "values": {"a": 1}}),
            "$.steps[0]: 'match' is a required property",
        ),
        (
            doc(settings={"retries": {"max_attempts": 0}}),
            "$.settings.retries.max_attempts: 0 is less than the minimum of 1",
        ),
        (
            doc({"id": "c", "kind": "condition", "all": [{"left": 1, "op": "resembles"}]}),
            "$.steps[0].all[0].op: 'resembles' is not one of",
        ),
    ],
)
def test_it_rejects_bad_documents_with_the_path_of_each_error(document, expected):
    found = errors(document)
    assert any(error.startswith(expected) for error in found), found
    with pytest.raises(InvalidDefinition):
        validate(document)


def test_it_reports_every_error_not_just_the_first():
    found = errors(doc({"id": "a", "kind": "http_request"}, {"id": "b", "kind": "respond", "status": 1}))
    assert len(found) == 2


def test_a_step_of_an_unknown_kind_hides_no_error_of_the_others():
    found = errors(
        {
            "trigger": {"type": "webhook", "colour": "red"},
            "steps": [
                {"id": "a", "kind": "teleport"},
                {"id": "b", "kind": "respond", "body": "{{steps.nowhere.x}}"},
                {"id": "b", "kind": "respond", "status": 1},
            ],
            "extra": True,
        }
    )
    assert [error.split(":")[0] for error in found] == [
        "$",
        "$.trigger",
        "$.steps[0].kind",
        "$.steps[1]",
        "$.steps[2].status",
        "$.steps[2].id",
    ], found
    assert "{{steps.nowhere.x}} refers to no earlier step" in found[3]


def test_errors_come_in_the_documents_order_with_step_ten_after_step_two():
    steps = [{"id": f"s{index}", "kind": "respond"} for index in range(11)]
    steps[2]["status"] = 1
    steps[10]["status"] = 1
    found = errors(doc(*steps))
    assert [error.split(":")[0] for error in found] == ["$.steps[2].status", "$.steps[10].status"]


@pytest.mark.parametrize(
    "document",
    [[], "text", None, {"trigger": [], "steps": {}}, {"trigger": {"type": 5}, "steps": [1, "x", None]}],
)
def test_a_document_of_the_wrong_shapes_gets_errors_not_an_exception(document):
    assert errors(document)


def test_a_document_with_too_many_steps_or_errors_is_answered_at_once_with_a_bounded_list():
    assert errors(doc(*[0] * 400_000)) == ["$.steps: 400000 steps, more than the 100 a definition may have"]
    many = errors(doc(*[{"id": "a", "kind": "respond", **{f"x{n}": 1 for n in range(300)}} for _ in range(100)]))
    assert len(many) == 101 and many[-1].startswith("$: and ") and many[-1].endswith(" more errors")
