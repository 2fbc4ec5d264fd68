"""The field engine: a field list as a Django form, its conditions on the server, prefill, validation, hostile input."""

import math

import pytest
from django.http import QueryDict
from hypothesis import given, settings
from hypothesis import strategies as st

from automations import definition, form_fields
from interfaces.forms.fields import FieldForm, holds, prefill_from

EVERY_TYPE = [
    {"name": "name", "type": "text", "required": True, "max_length": 20},
    {"name": "story", "type": "long_text"},
    {"name": "email", "type": "email", "required": True},
    {"name": "age", "type": "number", "min": 0, "max": 130, "integer": True},
    {"name": "plan", "type": "select", "options": ["free", {"value": "pro", "label": "Pro plan"}], "required": True},
    {"name": "tags", "type": "select", "multiple": True, "options": ["a", "b", "c"]},
    {"name": "agree", "type": "checkbox", "required": True},
    {"name": "start", "type": "date"},
    {"name": "source", "type": "hidden"},
    {"name": "cv", "type": "file", "max_files": 2},
]

CONDITIONAL = [
    {"name": "contact", "type": "select", "options": ["email", "phone"], "required": True},
    {"name": "phone", "type": "text", "required": True, "visible_if": {"field": "contact", "equals": "phone"}},
    {"name": "when", "type": "text", "required": True, "visible_if": {"field": "phone", "is_set": True}},
]


def post(**values) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in values.items():
        data.setlist(name, value if isinstance(value, list) else [value])
    return data


def test_a_valid_submission_gives_typed_answers_of_every_type():
    form = FieldForm(
        EVERY_TYPE,
        post(
            name="Ada",
            email="ada@example.com",
            age="36",
            plan="pro",
            tags=["a", "c"],
            agree="on",
            start="2026-12-01",
            source="ad",
        ),
    )
    assert form.is_valid(), form.errors
    answers = form.answers()
    assert answers["age"] == 36 and answers["tags"] == ["a", "c"] and answers["agree"] is True
    assert answers["start"] == "2026-12-01" and answers["plan"] == "pro" and answers["source"] == "ad"
    assert answers["cv"] == []


def test_each_invalid_field_gets_its_own_message_and_every_value_is_kept():
    data = post(name="x" * 21, email="not-an-email", age="131", plan="gold", start="01/12/2026", story="kept")
    form = FieldForm(EVERY_TYPE, data)
    assert not form.is_valid()
    assert set(form.errors) == {"name", "email", "age", "plan", "agree", "start"}
    html = form.render()
    assert 'value="not-an-email"' in html and "kept</textarea>" in html and 'value="131"' in html
    assert html.count('class="field__error"') == 6


def test_a_field_whose_condition_does_not_hold_is_never_required_and_its_value_is_dropped():
    form = FieldForm(CONDITIONAL, post(contact="email", phone="+1 555", when=""))
    assert form.is_valid(), form.errors
    assert form.answers() == {"contact": "email"}


def test_a_field_whose_condition_holds_is_required():
    form = FieldForm(CONDITIONAL, post(contact="phone"))
    assert not form.is_valid()
    assert set(form.errors) == {"phone"}  # "when" hangs on phone, which is empty: hidden
    assert FieldForm(CONDITIONAL, post(contact="phone", phone="1", when="now")).is_valid()


def test_hidden_fields_are_rendered_hidden_with_their_condition_for_the_script():
    html = FieldForm(CONDITIONAL).render()
    assert html.count(" hidden>") == 2
    assert "data-visible-if=" in html and "&quot;equals&quot;: &quot;phone&quot;" in html


def test_the_query_string_prefills_fields_and_hidden_fields_but_not_files_or_fields_that_refuse_it():
    fields = [
        {"name": "email", "type": "email"},
        {"name": "ref", "type": "hidden"},
        {"name": "secret", "type": "text", "prefill": False},
        {"name": "tags", "type": "select", "multiple": True, "options": ["a", "b", "c"]},
    ]
    form = FieldForm(fields, prefill=QueryDict("email=a@b.example&ref=news&secret=x&tags=a&tags=c&other=1"))
    html = form.render()
    assert 'value="a@b.example"' in html and 'value="news"' in html and 'value="x"' not in html
    assert html.count("checked") == 2


def test_a_prefill_holding_nul_or_a_lone_surrogate_is_ignored():
    form = FieldForm([{"name": "ref", "type": "hidden"}], prefill={"ref": "a\x00b"})
    assert form.initial == {}


@pytest.mark.parametrize("value", ["NaN", "nan", "inf", "-Infinity", "1e999"])
def test_a_number_that_is_not_finite_is_refused(value):
    form = FieldForm([{"name": "n", "type": "number"}], post(n=value))
    assert not form.is_valid() and "n" in form.errors


@pytest.mark.parametrize("value", ["a\x00b", "\ud800", "x\udfffy"])
def test_text_holding_nul_or_a_lone_surrogate_is_refused_beside_its_field(value):
    for kind in ("text", "long_text", "hidden"):
        form = FieldForm([{"name": "t", "type": kind}], post(t=value))
        assert not form.is_valid() and "t" in form.errors


HOSTILE_TEXT = st.one_of(
    st.text(max_size=50),
    st.text(alphabet=st.sampled_from(["\x00", "\ud800", "\udfff", "a", "\u202e", "é", "\n"]), max_size=50),
    st.just("x" * 200_000),
    st.sampled_from(["NaN", "Infinity", "-inf", "1e999", "0x10", "1_000", " 12 ", "٣", "2026-02-30", "--"]),
)


@settings(max_examples=300, deadline=None)
@given(values=st.dictionaries(st.sampled_from([f["name"] for f in EVERY_TYPE]), HOSTILE_TEXT))
def test_any_hostile_submission_is_valid_or_refused_never_an_exception_and_valid_answers_are_storable(values):
    form = FieldForm(EVERY_TYPE, post(**values))
    if form.is_valid():
        answers = form.answers()
        for value in answers.values():
            if isinstance(value, str):
                assert "\x00" not in value and not any("\ud800" <= ch <= "\udfff" for ch in value)
            if isinstance(value, float):
                assert math.isfinite(value)
    else:
        assert set(form.errors) <= {f["name"] for f in EVERY_TYPE}
    form.render()


@settings(max_examples=200, deadline=None)
@given(fields=st.lists(st.fixed_dictionaries({"name": st.text(max_size=5), "type": st.text(max_size=8)}), max_size=4))
def test_any_field_list_is_valid_or_refused_with_paths(fields):
    problems = definition.errors(
        {"trigger": {"type": "webhook"}, "steps": [{"id": "ask", "kind": "form", "fields": fields}]}
    )
    assert all(problem.startswith("$.steps[0]") for problem in problems)


def test_a_form_trigger_s_field_errors_name_their_path_in_the_definition():
    fields = [{"name": "a", "type": "text"}, {"name": "a", "type": "checkbox", "accept": [".pdf"]}]
    assert definition.errors({"trigger": {"type": "form", "fields": fields}, "steps": []}) == [
        "$.trigger.fields[1].name: 'a' is the name of an earlier field",
        "$.trigger.fields[1].accept: accept does not apply to a checkbox field",
    ]
    assert definition.errors({"trigger": {"type": "form", "fields": [{"name": "A", "type": "text"}]}, "steps": []}) == [
        "$.trigger.fields[0].name: 'A' does not match '^[a-z][a-z0-9_]{0,39}$'"
    ]


def test_field_list_errors_name_their_path():
    fields = [
        {"name": "a", "type": "text"},
        {"name": "a", "type": "select"},
        {"name": "b", "type": "text", "options": ["x"], "visible_if": {"field": "later", "equals": "1"}},
    ]
    assert form_fields.errors(fields) == [
        ((1, "name"), "'a' is the name of an earlier field"),
        ((2, "options"), "options does not apply to a text field"),
        ((2, "visible_if", "field"), "'later' names no earlier field"),
    ]


def test_a_required_select_starts_on_no_choice_and_is_refused_until_one_is_made():
    field = [{"name": "topic", "type": "select", "options": ["sales", "support"], "required": True}]
    html = FieldForm(field).render()
    assert '<option value="" selected>Choose…</option>' in html and "required" in html
    assert set(FieldForm(field, post(topic="")).errors) == {"topic"}
    assert FieldForm(field, post(topic="support")).is_valid()


def test_inputs_carry_their_bounds_and_accepted_types_for_the_browser():
    html = FieldForm(
        [
            {"name": "age", "type": "number", "min": 18, "max": 130, "integer": True},
            {"name": "cv", "type": "file", "accept": [".pdf", "image/*"]},
        ]
    ).render()
    assert 'min="18"' in html and 'max="130"' in html and 'accept=".pdf,image/*"' in html


def test_a_multiple_select_keeps_each_value_once():
    form = FieldForm(
        [{"name": "tags", "type": "select", "multiple": True, "options": ["a", "b"]}], post(tags=["b", "a", "b"])
    )
    assert form.is_valid() and form.answers() == {"tags": ["b", "a"]}


def test_a_condition_on_a_select_must_name_one_of_its_option_values():
    contact = {"name": "contact", "type": "select", "options": [{"value": "phone", "label": "Phone"}, "email"]}
    fields = [
        contact,
        {"name": "a", "type": "text", "visible_if": {"field": "contact", "equals": "Phone"}},  # the label, not a value
        {"name": "b", "type": "text", "visible_if": {"field": "contact", "in": ["email", "fax"]}},
        {"name": "c", "type": "text", "visible_if": {"field": "contact", "not_equals": "phone"}},
        {"name": "size", "type": "select", "options": ["1", "2", "true"]},
        {"name": "d", "type": "text", "visible_if": {"field": "size", "in": [1, True, 2.0]}},  # as the page writes
    ]
    assert form_fields.errors(fields) == [
        ((1, "visible_if", "equals"), "'Phone' is not one of 'contact''s option values"),
        ((2, "visible_if", "in", 1), "'fax' is not one of 'contact''s option values"),
    ]


@pytest.mark.parametrize(
    ("value", "wanted", "expected"),
    [
        (18.0, 18, True),
        (18, "18", True),
        (18.0, "18.0", True),
        (18.0, " 18 ", True),
        (18.0, "", False),
        (18.0, None, False),
        (18.0, "abc", False),
        ("abc", "ABC", False),
        ("abc", "abc", True),
        (True, "TRUE", True),
        ("18", 18.0, True),  # a text field against a number: as the page writes 18.0, "18"
        (18.0, "1_8", False),
        (18.0, "0x12", False),
        ("None", None, False),
    ],
)
def test_conditions_compare_as_static_forms_js_does(value, wanted, expected):
    assert holds({"field": "f", "equals": wanted}, value) is expected


def test_a_hidden_field_is_its_default_when_it_may_not_be_prefilled_or_was_not_sent():
    definition = [
        {"name": "fixed", "type": "hidden", "default": "campaign-7", "prefill": False},
        {"name": "ref", "type": "hidden", "default": "direct"},
    ]
    tampered = FieldForm(definition, post(fixed="tampered", ref="news"))
    assert tampered.is_valid() and tampered.answers() == {"fixed": "campaign-7", "ref": "news"}
    omitted = FieldForm(definition, post())
    assert omitted.is_valid() and omitted.answers() == {"fixed": "campaign-7", "ref": "direct"}
    plan = [
        {"name": "plan", "type": "hidden", "default": "free", "prefill": False},
        {"name": "company", "type": "text", "required": True, "visible_if": {"field": "plan", "equals": "pro"}},
    ]
    sent_pro = FieldForm(plan, post(plan="pro", company="ACME"))  # nor does what is sent decide what is shown
    assert sent_pro.is_valid() and sent_pro.answers() == {"plan": "free"}
    overlong = FieldForm(plan, post(plan="x" * 2000))  # nor refuse the form for a field nobody sees
    assert overlong.is_valid() and overlong.answers() == {"plan": "free"}


@pytest.mark.parametrize(
    ("field", "carriers"),
    [
        ({"name": "to", "type": "text"}, 1),
        ({"name": "size", "type": "select", "options": ["S", "M"]}, 1),
        ({"name": "size", "type": "select", "options": ["S", "M"], "multiple": True}, 0),  # each box would be required
    ],
)
def test_a_conditional_required_field_is_marked_and_its_input_made_required_by_the_script_only_where_it_can_be(
    field, carriers
):
    fields = [
        {"name": "gift", "type": "checkbox"},
        {**field, "required": True, "visible_if": {"field": "gift", "equals": True}},
    ]
    html = str(FieldForm(fields))
    assert "field--required" in html  # its " *", though hidden for now
    assert html.count("data-required") == carriers


def test_prefill_reads_the_raw_query_as_django_does_and_keeps_broken_utf8_as_what_it_ignores():
    values = prefill_from("a=1+2&a=3&b=&c&caf%C3%A9=caf\xc3\xa9&bad=%FF")  # WSGI: raw bytes as latin-1
    assert values.getlist("a") == ["1 2", "3"] and values["b"] == "" and values["c"] == ""
    assert values["café"] == "café"
    assert values["bad"] == "\udcff"  # a lone surrogate: _initial leaves it out
