"""The path syntax: reading trigger data and earlier output into step settings."""

from automations.paths import references, render, resolve

CONTEXT = {
    "trigger": {"body": {"customer": {"email": "a@example.com", "tags": ["x", "y"]}, "n": 3}, "params": {}},
    "steps": {"lookup": {"rows": [{"plan": "pro"}]}},
}


def test_resolve_follows_names_and_list_indexes():
    assert resolve("trigger.body.customer.email", CONTEXT) == "a@example.com"
    assert resolve("steps.lookup.rows.0.plan", CONTEXT) == "pro"
    assert resolve("trigger.body.customer.tags.1", CONTEXT) == "y"


def test_a_path_that_leads_nowhere_is_missing_not_an_error():
    for path in (
        "trigger.body.nope",
        "trigger.body.customer.email.more",
        "steps.lookup.rows.5.plan",
        "trigger.body.n.x",
        "trigger.body.customer.tags.\u00b2",  # "²".isdigit() holds, and int("²") raises
    ):
        assert resolve(path, CONTEXT) is None


def test_a_whole_template_keeps_the_type_and_text_templates_interpolate():
    assert render("{{ trigger.body.n }}", CONTEXT) == 3
    assert render("{{trigger.body.customer.tags}}", CONTEXT) == ["x", "y"]
    assert render("n={{trigger.body.n}} tags={{trigger.body.customer.tags}} none=[{{trigger.body.nope}}]", CONTEXT) == (
        'n=3 tags=["x","y"] none=[]'
    )
    assert render({"a": ["{{steps.lookup.rows.0.plan}}", 1]}, CONTEXT) == {"a": ["pro", 1]}


def test_references_lists_every_path_in_nested_settings():
    assert references({"a": ["{{trigger.body.x}}", {"b": "x {{ steps.s.y }}"}], "c": 1}) == {
        "trigger.body.x",
        "steps.s.y",
    }
