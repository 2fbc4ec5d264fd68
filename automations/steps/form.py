"""Form: ask a person to fill in a form, and wait for the answer (n8n's Form node, Zapier's Interfaces).

Who is asked (`to`):
- `session`: the visitor of the run's form session page, who sees this form
  next, in the same tab (the default when a hosted form started the run);
- `link`: one person, by a one-time link /form/s/{key} shown on the run in
  Execution History and, when `email` names an address, mailed there (the
  default otherwise). The link works once.

The step's output is the answers, as the form trigger's: one field per name.
Like every step that waits for a person it may expire (automations/waiting.py).
"""

import logging
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage, get_connection
from django.core.validators import validate_email

from automations import effects, form_fields, waiting
from automations.steps import StepFailed
from publickeys.models import PublicKey
from publickeys.selectors import link_of_key_id
from publickeys.services import issue_keyed

logger = logging.getLogger(__name__)
KIND = "form"
SCHEMA = {
    "type": "object",
    "required": ["fields"],
    "properties": {
        **form_fields.FORM_PROPERTIES,
        "to": {"enum": ["session", "link"]},
        # An address, or a {{ path }} giving one: the one-time link is mailed there.
        "email": {"type": "string", "minLength": 1, "maxLength": 254},
        **waiting.EXPIRY_PROPERTIES,
    },
}
FORM_SETTINGS = ("title", "description", "submit_label", "fields")


def errors(settings: dict) -> list[tuple[tuple, str]]:
    found = [(("fields", *path), message) for path, message in form_fields.errors(settings["fields"])]
    if settings.get("to") == "session" and "email" in settings:
        found.append((("email",), "a form for the session visitor is not mailed; use to: link"))
    return found


def run(settings: dict, context) -> dict:
    run_ = context.run
    from_form = run_ is not None and run_.source == "form"
    to = settings.get("to") or ("session" if from_form and "email" not in settings else "link")
    form = {name: settings[name] for name in FORM_SETTINGS if name in settings}
    if to == "session":
        if not from_form:
            raise StepFailed("this run has no form session (a hosted form did not start it); use to: link")
        asked = effects.once(context, lambda: {"expires_at": waiting.iso(waiting.expiry(settings))})
        raise waiting.person_wait(KIND, settings, expires=asked["expires_at"], to="session", form=form)
    email = settings.get("email")
    if email is not None:
        try:
            validate_email(email)
        except ValidationError:
            raise StepFailed(f"email is not an address: {str(email)[:100]!r}") from None
    # Run again for the same run (its worker lost before the run was saved as waiting), the step finds the link it
    # issued then and waits on it: issuing another would retire the one already mailed.
    link = effects.once(context, lambda: _issue(run_, waiting.expiry(settings)))
    wait = waiting.person_wait(KIND, settings, expires=link["expires_at"], to="link", form=form, email=email)
    wait.waiting_for["public_key_id"] = link["public_key_id"]
    if email and not link.get("mailed"):
        found = link_of_key_id(link["public_key_id"])
        if found is None:
            raise StepFailed("its link could not be read again to mail it (was URL_KEY_SECRET changed?)")
        _send(email, form, found[1], taken=lambda: effects.note(context, {**link, "mailed": True}))
    raise wait


def _issue(run_, until) -> dict:
    """A one-time link for the run's wait; what is recorded of it: its key's id and expiry, never the key."""
    # The link stops working at the step's expiry by itself: an expired link then misses as a never-issued one.
    _, key_id = issue_keyed(purpose=PublicKey.Purpose.ONE_TIME_FORM, target=run_, expires_at=until)
    return {"public_key_id": key_id, "expires_at": waiting.iso(until), "mailed": False}


def resume(waiting_for: dict, answer) -> dict:
    if answer is None:
        return waiting.expired_output(waiting_for)
    return answer


def _send(address: str, form: dict, url: str, *, taken: Callable[[], None]) -> None:
    """Mail the link; taken() is called as soon as the mail server has accepted the message.

    That is before the goodbye to the server (QUIT), so that a worker lost
    while the server answers it has already noted the mail and a second
    execution of the step does not send it again. What fails after the
    message was accepted is logged, not the step's failure.
    """
    title = form.get("title") or "A form"
    body = f"{title}\n\n{form.get('description', '')}\n\nPlease fill it in here (the link works once):\n{url}\n"
    message = EmailMessage(f"{title}: your answer is needed", body, None, [address])
    connection = get_connection()
    try:
        connection.open()
        connection.send_messages([message])
    except Exception as error:  # the mail server's refusal is the step's failure, with its reason
        _close(connection)
        raise StepFailed(f"the form could not be mailed to {address}: {type(error).__name__}") from None
    taken()
    _close(connection)


def _close(connection) -> None:
    try:
        connection.close()
    except Exception:
        logger.warning("the mail server did not end the conversation cleanly", exc_info=True)
