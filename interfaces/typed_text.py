"""Text people type for other people to read (chat messages, approval comments)."""

import unicodedata


def has_control_characters(text: str) -> bool:
    """C0, DEL and C1 characters, tab and line breaks aside: U+009B opens a terminal's escape sequence where the
    text is printed, in a log or a mail, and none of them is typed on purpose."""
    return any(unicodedata.category(char) == "Cc" and char not in "\t\n\r" for char in text)
