"""Values every database stores: JSON parsed strictly, and text and data cleaned of what a column refuses.

Trigger data and step outputs come from strangers. PostgreSQL refuses U+0000
in text and jsonb; a lone surrogate (JSON's "\\ud800") cannot be encoded as
UTF-8 at all; json.dumps writes NaN and Infinity, which no JSON parser,
PostgreSQL's included, accepts; and Python's parser, encoder and every
recursive walk of a value (the path renderer, deepcopy) fail with
RecursionError somewhere near a thousand levels. A value that cannot be
stored would fail its run's every attempt, so the rules are applied before
anything is stored, in one place (docs/webhooks.md, "Odd input"):

- NUL and lone surrogates in strings, object keys included, become U+FFFD;
- NaN and infinite numbers in data become null, as JavaScript's
  JSON.stringify writes them;
- JSON text holding non-finite numbers, or nested deeper than
  MAX_PARSED_DEPTH, does not parse as JSON here (the caller keeps it as
  text);
- a value nested deeper than MAX_DEPTH cannot be stored (its step fails).
  The margin between the two lets steps wrap trigger data in a few levels
  of their own.
"""

import json
import math
import re

MAX_PARSED_DEPTH = 200
MAX_DEPTH = 500
REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def loads(text: str):
    """The JSON value of text, or ValueError: also for NaN, Infinity, 1e999 and nesting past MAX_PARSED_DEPTH."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    _check_depth(value)
    return value


def clean(value, depth: int = 0):
    """A copy of value that json.dumps(allow_nan=False) writes and PostgreSQL's jsonb stores; ValueError when too deep.

    Tuples become lists; values of other types are left as they are.
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return {clean_text(str(key)): clean(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return [clean(item, depth + 1) for item in value]
    return value


def clean_text(text: str) -> str:
    """text with NUL and lone surrogates replaced by U+FFFD: storable in a text column and encodable as UTF-8."""
    if text.isascii() and "\x00" not in text:
        return text
    return _UNSTORABLE.sub(REPLACEMENT, text)


def unstorable(value) -> list[tuple[list, str]]:
    """(path, problem) for each part of a document a person wrote (a definition, table data) that no database
    stores as it is: refused with its path, not cleaned, since its author is there to fix it."""
    found, stack = [], [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            spelled = "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
            found.append((path, f"{spelled} is not a number"))
        elif isinstance(item, str) and _UNSTORABLE.search(item):
            found.append((path, "a NUL character or a lone surrogate cannot be stored"))
        elif isinstance(item, (dict, list)) and len(path) >= MAX_PARSED_DEPTH:
            found.append((path, f"nested deeper than {MAX_PARSED_DEPTH} levels"))
        elif isinstance(item, dict):
            for key, child in item.items():
                if _UNSTORABLE.search(str(key)):
                    found.append((path, "a key with a NUL character or a lone surrogate cannot be stored"))
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in enumerate(item))
    return sorted(found, key=lambda problem: list(map(str, problem[0])))


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:20]} is too large for a number")
    return number


def _check_depth(value) -> None:
    """ValueError if value nests deeper than MAX_PARSED_DEPTH; iterative, so any depth json.loads returned is safe."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= MAX_PARSED_DEPTH:
            raise ValueError(f"JSON nested deeper than {MAX_PARSED_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)
