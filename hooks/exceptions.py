"""Domain errors of the webhook URLs."""


class BodyTooLarge(Exception):
    """The body is over HOOK_MAX_BODY_BYTES (413)."""
