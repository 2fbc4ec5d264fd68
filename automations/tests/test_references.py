"""The connections a definition names: {"connection": <id>} anywhere in it, integers only."""

from automations.references import connection_ids


def test_it_finds_a_connection_named_in_a_step_or_the_trigger():
    definition = {
        "trigger": {"type": "app_trigger", "connection": 3},
        "steps": [{"kind": "app_action", "connection": 7, "input": {"nested": [{"connection": 9}]}}],
    }
    assert connection_ids(definition) == {3, 7, 9}


def test_it_ignores_what_is_not_an_integer_id():
    definition = {"steps": [{"connection": "7"}, {"connection": True}, {"connection": 1.5}, {"connection": None}]}
    assert connection_ids(definition) == set()


def test_a_definition_naming_none_names_none():
    assert connection_ids({"trigger": {"type": "webhook"}, "steps": [], "settings": {}}) == set()
