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

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email

from automations import form_fields, waiting
from automations.steps import StepFailed
from publickeys import crypto
from publickeys.models import PublicKey
from publickeys.services import issue_key

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
        raise waiting.person_wait(KIND, settings, to="session", form=form)
    email = settings.get("email")
    if email is not None:
        try:
            validate_email(email)
        except ValidationError:
            raise StepFailed(f"email is not an address: {str(email)[:100]!r}") from None
    wait = waiting.person_wait(KIND, settings, to="link", form=form, email=email)
    # The link stops working at the step's expiry by itself: an expired link then misses as a never-issued one.
    key = issue_key(purpose=PublicKey.Purpose.ONE_TIME_FORM, target=run_, expires_at=wait.until)
    if email:
        _send(email, form, django_settings.BASE_URL + f"/form/s/{key}")
    wait.waiting_for["public_key_id"] = PublicKey.objects.values_list("pk", flat=True).get(digest=crypto.digest(key))
    raise wait


def resume(waiting_for: dict, answer) -> dict:
    if answer is None:
        return waiting.expired_output(waiting_for)
    return answer


def _send(address: str, form: dict, url: str) -> None:
    title = form.get("title") or "A form"
    body = f"{title}\n\n{form.get('description', '')}\n\nPlease fill it in here (the link works once):\n{url}\n"
    try:
        send_mail(f"{title}: your answer is needed", body, None, [address])
    except Exception as error:  # the mail server's refusal is the step's failure, with its reason
        raise StepFailed(f"the form could not be mailed to {address}: {type(error).__name__}") from None
