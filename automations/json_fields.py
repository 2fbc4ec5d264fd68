"""A form field for JSON that staff write in admin (definitions, table rows, an app's settings): what no database
stores is refused with its path, as the import commands refuse it, and JSON nested too deep to parse is an error
on the field, not a 500."""

from django import forms
from django.forms.fields import InvalidJSONInput

from automations import jsonsafe
from automations.definition import json_path


class StoredJSONField(forms.JSONField):
    def to_python(self, value):
        try:
            return super().to_python(value)
        except RecursionError:
            raise forms.ValidationError("JSON nested too deep") from None

    def bound_data(self, data, initial):
        try:
            return super().bound_data(data, initial)
        except RecursionError:
            return InvalidJSONInput(data)

    def validate(self, value):
        super().validate(value)
        if problems := jsonsafe.unstorable(value):
            raise forms.ValidationError([f"{json_path(path)}: {problem}" for path, problem in problems])


OVERRIDES = {"form_class": StoredJSONField}
