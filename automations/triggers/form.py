"""Hosted form: a page at /form/{key} whose every submission starts a run (SPEC 4.3), as n8n's Form Trigger.

The page is served by interfaces/; this module holds the form's settings:
its title, description and fields (automations/form_fields.py), whether
visitors must sign in, what they see at the end (a message, or a redirect),
and its submission limits. Steps read the answers as trigger.body.<field>.
"""

from automations import form_fields
from automations.triggers.base import Trigger

_RATE = {"type": "string", "pattern": r"^[1-9]\d*/[1-9]?\d*[smhd]$"}


class Form(Trigger):
    TYPE = "form"
    SCHEMA = {
        "type": "object",
        "required": ["fields"],
        "properties": {
            **form_fields.FORM_PROPERTIES,
            "require_sign_in": {"type": "boolean"},
            "completion": {
                "type": "object",
                "additionalProperties": False,
                "minProperties": 1,
                "maxProperties": 1,
                "properties": {
                    "message": {"type": "string", "minLength": 1, "maxLength": 5000},
                    "redirect": {"type": "string", "pattern": r"^https?://[^\s]+$", "maxLength": 2000},
                },
            },
            # Submissions per visitor's IP and per form, such as 5/m or 100/h (defaults FORM_RATE_IP, FORM_RATE_FORM).
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"per_ip": _RATE, "per_form": _RATE},
            },
        },
    }
    URLS = ("form",)

    def errors(self, settings: dict) -> list[tuple[tuple, str]]:
        """Field names unique and the like (automations/form_fields.py), each path under `fields`."""
        return [(("fields", *path), message) for path, message in form_fields.errors(settings["fields"])]


TRIGGER = Form()
