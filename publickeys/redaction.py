"""Redaction: a key is a password, so no column but its digest and sealed copy, and no log line, holds it in clear."""

import re

PLACEHOLDER = "{key}"
# What ends a key in text: a path's or query's delimiters, whitespace, quotes and the brackets around quoted URLs.
SEPARATORS = "/?#&\"'<>\\`|,;)]"
_KEY = re.compile(rf"[^\s{re.escape(SEPARATORS)}]+")
_QUERY = re.compile(r"[^\s#\"'<>\\`|]*")


def spelled(literal: str) -> str:
    """A pattern for every spelling of literal that a server decodes to it: each character as itself or as %XX."""
    parts = []
    for char in literal:
        escaped = "".join(f"[{digit}{digit.lower()}]" if digit.isalpha() else digit for digit in f"{ord(char):02X}")
        parts.append(f"(?:{re.escape(char)}|%{escaped})")
    return "".join(parts)


class _Shapes:
    """The key URL shapes, compiled for one way of spelling their fixed parts."""

    def __init__(self, spell):
        slash, question = spell("/"), spell("?")
        embed = spell("embed.js")
        self.paths = re.compile(
            "|".join(
                [
                    # Any character before: also /webhook/automation-, and near misses (\\automation-, %5C) that
                    # still carry a real key.
                    spell("automation-"),
                    spell("webservice-"),
                    # A connection's URL and an app's shared endpoint (hooks/asgi.py).
                    slash + spell("connection-"),
                    slash + spell("app-"),
                    slash + spell("form") + slash + f"(?:(?:{spell('s')}|{spell('run')}){slash})?",
                    # /webchat/embed.js is the script itself; its key is in the query.
                    slash + spell("webchat") + slash + rf"(?!{embed}(?:[\s{re.escape(SEPARATORS)}]|$))",
                ]
            )
        )
        self.queries = re.compile(
            f"(?P<key>{slash}{spell('webchat')}{slash}{embed}{question})"
            f"|(?P<queue>{slash}{spell('moderation')}(?:{slash}{spell('api')})?(?:{slash})?{question})"
        )
        # A parameter's value starts after ?, & (also spelled %26 or &amp;) and its name.
        self.parameters = {
            name: re.compile(rf"(?:^|&amp;|&|%26){spell(name)}{spell('=')}") for name in self.queries.groupindex
        }

    def key_spans(self, text: str):
        position = 0
        # Searched again from each match's next character: shapes may overlap (/webchat/form/{key}).
        while found := self.paths.search(text, position):
            if key := _KEY.match(text, found.end()):
                yield key.span()
            position = found.start() + 1
        for found in self.queries.finditer(text):
            start = found.end()
            query = _QUERY.match(text, start).group()
            for value in self.parameters[found.lastgroup].finditer(query):
                if key := _KEY.match(query, value.end()):
                    yield start + key.start(), start + key.end()


_LITERAL = _Shapes(re.escape)
_ENCODED = _Shapes(spelled)  # slower; needed only where a % is


def redact(text: str) -> str:
    """text with the key of every public URL in it replaced by {key}, however the URL is spelled.

    Covers /automation-, /webhook/automation-, /webservice-, /connection-, /app-, /form/,
    /form/s/, /form/run/, /webchat/, /webchat/embed.js?key= and
    /moderation?queue= and /moderation/api?queue=, anywhere in the text (a full URL, a request line, a
    mounted path), with any of their characters percent-encoded as a server
    would decode them (/%61utomation-, automation%2D, webhook%2Fautomation-).
    A key runs to the next separator (SEPARATORS or whitespace). A shape
    matched where no key is (an app slug that begins with automation-) loses
    that segment: over-redacting costs a log line some detail, missing a
    key would hand out a credential.
    """
    merged: list[list[int]] = []
    shapes = _ENCODED if "%" in text else _LITERAL
    for start, end in sorted(shapes.key_spans(text)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text
    parts, position = [], 0
    for start, end in merged:
        parts += [text[position:start], PLACEHOLDER]
        position = end
    parts.append(text[position:])
    return "".join(parts)
