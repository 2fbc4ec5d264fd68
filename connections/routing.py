"""A shared endpoint's routing rule: which account a delivery names, and so which connections it is for.

docs/connections.md, "App triggers: per connected account and shared endpoint". An app's auth_config says it:

    "routing": {"body_path": "account.id", "account_path": "id"}
    "routing": {"header": "X-Account-Id", "account_path": "user.id"}

body_path is read in the delivery's body as the steps read it (trigger.body, hooks/trigger.py: text that parses as
JSON is JSON), header in the request's headers (kept on the delivery as it is stored, since headers are not).
account_path is read in the answer to the app's test call when an owner connects (connections/checking.py): what
it names is the connection's account_id, which a delivery's account must equal. Every value is read as hostile: a
path that names nothing, a list, a dict, a boolean, an empty string, text with a NUL or longer than MAX_ACCOUNT is
no account at all, and the delivery ends unmatched with that reason.
"""

from automations import jsonsafe

MAX_ACCOUNT = 255
MAX_PATH = 200
MAX_HEADER_NAME = 100


def rule_of(auth_config) -> dict:
    """The app's routing rule with only well-formed entries: body_path, header (lower case) and account_path."""
    routing = auth_config.get("routing") if isinstance(auth_config, dict) else None
    if not isinstance(routing, dict):
        return {}
    rule = {}
    for name, longest in (("body_path", MAX_PATH), ("account_path", MAX_PATH), ("header", MAX_HEADER_NAME)):
        value = routing.get(name)
        if isinstance(value, str) and value.strip() and len(value) <= longest and "\x00" not in value:
            rule[name] = value.strip().lower() if name == "header" else value.strip()
    return rule


def account_at(document, path: str) -> str | None:
    """The account named at the dotted path in a parsed document (a number segment indexes a list), or None."""
    value = document
    for segment in path.split("."):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isascii() and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return account(str(value))


def account_of(app, answer: bytes | None) -> str:
    """The account a test call's answer names at the app's routing account_path; "" when the app names none."""
    path = rule_of(app.auth_config).get("account_path")
    return (account_in_answer(answer, path) or "") if answer is not None and path else ""


def account_in_answer(answer: bytes, path: str) -> str | None:
    """The account at path in a test call's answer (JSON of any depth or none at all), or None."""
    try:
        document = jsonsafe.loads(answer.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return account_at(document, path)


def account(text: str) -> str | None:
    """text as an account, or None when it cannot be one: empty, longer than MAX_ACCOUNT, or holding a NUL (which
    PostgreSQL refuses in a text column or a query) or a control character."""
    text = text.strip()
    if not text or len(text) > MAX_ACCOUNT or any(ord(char) < 32 or char == "\x7f" for char in text):
        return None
    return text


def account_in_headers(header: str, headers: dict) -> str:
    """The account the header names in a request's headers (lower-case names), "" when none: stored on the row."""
    return account(headers.get(header, "")) or ""
