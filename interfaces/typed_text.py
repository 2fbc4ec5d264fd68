"""Text people type for other people to read (chat messages, approval comments), and text shown to people."""

import re
import unicodedata

# Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): inside text from trigger data
# they would show it reordered, an approval item reading reversed to its approver ("Refund 100" as "001 dnufeR").
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def has_control_characters(text: str) -> bool:
    """C0, DEL and C1 characters, tab and line breaks aside: U+009B opens a terminal's escape sequence where the
    text is printed, in a log or a mail, and none of them is typed on purpose."""
    return any(unicodedata.category(char) == "Cc" and char not in "\t\n\r" for char in text)


def without_bidi_controls(text: str) -> str:
    """The text as a person is shown it: each bidirectional control replaced by U+FFFD, visible and harmless.

    Marks (U+200E, U+200F), which right-to-left writing uses and which reorder nothing around them, stay.
    """
    return BIDI_CONTROLS.sub("\ufffd", text)
