"""keys.redact: no text the service writes holds a URL key in clear, however its URL was spelled (contract 7)."""

import random

import pytest
from django.core.handlers.wsgi import get_path_info
from django.urls import Resolver404, resolve
from gunicorn.util import unquote_to_wsgi_str
from hypothesis import assume, given
from hypothesis import strategies as st

from publickeys.redaction import PLACEHOLDER, SEPARATORS, redact

KEY = "Zq3-x_9KpL0aBcDeFgHiJkLmNoPqRsTu"

# Each shape as the text before its key; the key follows, then whatever ends it.
SHAPES = [
    "/automation-",
    "/webhook/automation-",
    "/webservice-",
    "https://hooks.example.com/automation-",
    "POST /webhook/automation-",
    "/form/",
    "/form/s/",
    "/form/run/",
    "/webchat/",
    "/webchat/embed.js?key=",
    "/webchat/embed.js?v=2&key=",
    "/moderation?queue=",
    "/moderation/?page=1&queue=",
    "/moderation/api?queue=",
    "/moderation/api/?x=1&queue=",
]


def django_path(raw: str) -> str:
    """The path Django's view sees for a raw request target, decoded as gunicorn and Django decode it."""
    return get_path_info({"PATH_INFO": unquote_to_wsgi_str(raw)})


def hooks_key(raw: str) -> str | None:
    """The key the hooks URLconf hands its view for this raw path, or None if no key route takes it."""
    try:
        match = resolve(django_path(raw), urlconf="hooks.urls")
    except Resolver404:
        return None
    return match.kwargs.get("key")


@pytest.mark.parametrize("shape", SHAPES)
def test_it_replaces_the_key_of_every_url_shape(shape):
    text = f'GET "{shape}{KEY}" 200 and {shape}{KEY}?a=1 then {shape}{KEY}#top'
    assert redact(text) == f'GET "{shape}{{key}}" 200 and {shape}{{key}}?a=1 then {shape}{{key}}#top'


def test_the_stored_paths_read_as_documented():
    assert redact(f"/automation-{KEY}") == "/automation-{key}"
    assert redact(f"/webhook/automation-{KEY}") == "/webhook/automation-{key}"
    assert redact(f"/webservice-{KEY}") == "/webservice-{key}"


def test_it_is_idempotent():
    once = redact(f"/automation-{KEY} /webchat/embed.js?key={KEY} /form/s/{KEY}")
    assert redact(once) == once
    assert KEY not in once


def test_every_repeated_query_key_is_replaced():
    # Django hands a view the last of repeated parameters; the others are keys as well.
    assert redact(f"/moderation?queue={KEY}&queue=other&x=1") == "/moderation?queue={key}&queue={key}&x=1"
    assert redact(f"/webchat/embed.js?key={KEY}&amp;key=other") == "/webchat/embed.js?key={key}&amp;key={key}"


def test_shapes_that_overlap_give_up_every_key():
    assert redact(f"/webchat/form/{KEY}") == "/webchat/{key}/{key}"
    assert redact(f"/automation-x%2Fautomation-{KEY}") == "/automation-{key}"


@pytest.mark.parametrize(
    "raw",
    [
        f"/%61utomation-{KEY}",
        f"/automation%2D{KEY}",
        f"/automation%2d{KEY}",
        f"/webhook%2Fautomation-{KEY}",
        f"/webhook%2fautomation-{KEY}",
        f"/%77ebhook/%61%75%74%6F%6D%61%74%69%6F%6E%2D{KEY}",
        f"/webs%65rvice-{KEY}",
    ],
)
def test_it_catches_the_percent_encoded_spellings_django_decodes_to_a_key_url(raw):
    assert hooks_key(raw) == KEY, "not a spelling Django routes with this key"
    assert KEY not in redact(f'"POST {raw} HTTP/1.1"')


@pytest.mark.parametrize(
    "raw, redacted",
    [
        (f"/form/%73/{KEY}", "/form/%73/{key}"),
        (f"/form%2Frun%2F{KEY}", "/form%2Frun%2F{key}"),
        (f"/webchat/emb%65d.js?k%65y={KEY}", "/webchat/emb%65d.js?k%65y={key}"),
        (f"/moderation?q%75eue%3D{KEY}", "/moderation?q%75eue%3D{key}"),
        (f"/login?next=%2Fmoderation%3Fqueue%3D{KEY}", "/login?next=%2Fmoderation%3Fqueue%3D{key}"),
        (f"/automation-%4B{KEY}", "/automation-{key}"),
    ],
)
def test_it_catches_percent_encoded_spellings_of_the_other_shapes(raw, redacted):
    assert redact(raw) == redacted


@pytest.mark.parametrize(
    "lookalike",
    [
        f"/Automation-{KEY}",  # URLs are case-sensitive
        f"/automations/{KEY}",
        f"/webservice/{KEY}",
        f"/%2561utomation-{KEY}",  # encoded twice: Django sees %61utomation-
        f"/automation{KEY}",
    ],
)
def test_it_leaves_hooks_lookalikes_that_reach_no_key_route(lookalike):
    assert hooks_key(lookalike) is None
    assert redact(lookalike) == lookalike


@pytest.mark.parametrize(
    "near_miss",
    [f"automation-{KEY}", f"/webhook\\automation-{KEY}", f"/webhook%5Cautomation-{KEY}", f"POST webservice-{KEY}"],
)
def test_a_near_miss_that_reaches_no_route_still_has_its_key_redacted(near_miss):
    """A sender's typo (a backslash, no slash) answers 404, but the key it carries is real: not in a log."""
    assert hooks_key(near_miss) is None
    assert KEY not in redact(near_miss) and "{key}" in redact(near_miss)


@pytest.mark.parametrize(
    "lookalike",
    [
        "/automation-",
        "/webservice-",
        "/form/",
        "/form/s/",
        "/webchat/",
        "/webchat/embed.js",
        "/webchat/embed.js?v=2",
        "/moderation?page=2",
        f"/moderation?queues={KEY}",
        f"/moderation?xqueue={KEY}",
        f"/webchat/embed.js?keys={KEY}",
        f"/forms/{KEY}",
        f"/webchats/{KEY}",
        "/admin/automations/automation/3/change/",
        "/catalog/v1/apps/acorn-crm",
        "Task hooks.process_delivery[5] succeeded",
        "",
        "{key}",
    ],
)
def test_it_leaves_text_without_a_key(lookalike):
    assert redact(lookalike) == lookalike


def in_a_key(char: str) -> bool:
    return char not in SEPARATORS and not char.isspace()


def key_characters():
    """Any character but a separator, printable ASCII drawn as often as all the rest."""
    ascii_ = [char for char in map(chr, range(0x21, 0x7F)) if in_a_key(char)]
    return st.one_of(st.sampled_from(ascii_), st.characters(exclude_categories=("Cs",)).filter(in_a_key))


def plain_text():
    """Text around a URL that cannot itself make a shape or extend a query."""
    return st.text(st.characters(exclude_categories=("Cs",)).filter(lambda char: char not in "/%?&="))


@given(
    shape=st.sampled_from(SHAPES),
    key=st.text(key_characters(), min_size=1),
    separator=st.sampled_from([*SEPARATORS, " ", "\t", "\n", "\u2028", ""]),
    before=plain_text(),
    after=plain_text(),
)
def test_it_replaces_a_key_of_any_characters_up_to_its_separator(shape, key, separator, before, after):
    assume(separator or not after)  # with nothing after the key, the key runs to the end of the text
    assume(separator != "/" or not after)  # a slash may start another shape: /webchat/{key}/form/{key}
    assume(not (shape == "/webchat/" and django_path(key) == "embed.js"))  # the script's own path, not a key
    assume(not (shape == "/form/" and key in ("s", "run") and separator == "/"))  # that is /form/s/{key}
    text = f"{before} {shape}{key}{separator}{after}"
    assert redact(text) == f"{before} {shape}{PLACEHOLDER}{separator}{after}"


@given(
    mask=st.integers(min_value=0, max_value=2**96 - 1),
    seed=st.integers(),
    prefix=st.sampled_from(["/automation-", "/webhook/automation-", "/webservice-"]),
)
def test_every_percent_encoded_spelling_django_routes_is_caught(mask, seed, prefix):
    chance = random.Random(seed)

    def spelled(char: str, index: int) -> str:
        if not mask >> index & 1:
            return char
        code = f"{ord(char):02X}"
        return "%" + (code if chance.random() < 0.5 else code.lower())

    raw_key = "".join(spelled(char, 64 + index) for index, char in enumerate(KEY))
    raw = "".join(spelled(char, index) for index, char in enumerate(prefix)) + raw_key
    assert hooks_key(raw) == KEY
    redacted = redact(f'127.0.0.1 - - "POST {raw} HTTP/1.1" 200 0 "-" "curl"')
    assert KEY not in redacted and raw_key not in redacted
    assert KEY not in redact(django_path(raw))
