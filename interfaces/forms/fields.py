"""A form's field list (automations/form_fields.py) as a Django form: types, visible_if, prefill and validation.

The same list drives the hosted form, the session page's forms and one-time
forms. Conditions are evaluated on the server whatever the browser shows: a
field whose visible_if does not hold is left out of the form, so it is never
required and whatever was sent for it is ignored.
"""

import json
import re
from datetime import date
from urllib.parse import parse_qsl

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.template.loader import render_to_string
from django.utils.datastructures import MultiValueDict
from django.utils.translation import gettext_lazy as _

from automations.form_fields import LONG_TEXT_MAX, TEXT_MAX, as_page_writes

_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")
_RAW_BYTE = re.compile("[\x80-\xff]")


def _text_only(value) -> None:
    """NUL and lone surrogates are no text a person typed, and no database column stores them."""
    values = value if isinstance(value, list) else [value]
    if any(isinstance(item, str) and _NOT_TEXT.search(item) for item in values):
        raise ValidationError(_("This contains characters that are not text."), code="not_text")


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more files in one input; the upload handler (forms/uploads.py) has enforced count, size and type."""

    def __init__(self, *args, max_files: int = 1, **kwargs):
        self.max_files = max_files
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": max_files > 1}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else ([data] if data else [])
        if not files:
            if self.required:
                raise ValidationError(self.error_messages["required"], code="required")
            return []
        if len(files) > self.max_files:
            raise ValidationError(_("Send at most %(count)d files.") % {"count": self.max_files}, code="max_files")
        return [super(MultipleFileField, self).clean(item, initial) for item in files]


class DistinctChoicesField(forms.MultipleChoiceField):
    """A multiple select's answer: each value once, in the order first sent (a crafted POST may repeat one)."""

    def clean(self, value):
        return list(dict.fromkeys(super().clean(value)))


def options(field: dict) -> list[tuple[str, str]]:
    found = []
    for option in field.get("options", []):
        if isinstance(option, str):
            found.append((option, option))
        else:
            found.append((option["value"], option.get("label") or option["value"]))
    return found


def django_field(field: dict) -> forms.Field:
    """The Django form field for one field of the list."""
    kind = field["type"]
    required = bool(field.get("required"))
    common = {"label": field.get("label") or field["name"].replace("_", " ").capitalize(), "required": required}
    if field.get("help"):
        common["help_text"] = field["help"]
    attrs = {"placeholder": field["placeholder"]} if field.get("placeholder") else {}
    if kind in ("text", "long_text", "email"):
        longest = TEXT_MAX if kind != "long_text" else LONG_TEXT_MAX
        text = {
            "max_length": field.get("max_length", longest),
            "min_length": field.get("min_length"),
            "validators": [_text_only],
        }
        if kind == "email":
            return forms.EmailField(**{**common, **text, "max_length": 254}, widget=forms.EmailInput(attrs=attrs))
        widget = forms.Textarea(attrs={**attrs, "rows": 5}) if kind == "long_text" else forms.TextInput(attrs=attrs)
        return forms.CharField(**{**common, **text}, widget=widget)
    if kind == "number":
        validators = []
        if "min" in field:
            validators.append(MinValueValidator(field["min"]))
        if "max" in field:
            validators.append(MaxValueValidator(field["max"]))
        numeric = forms.IntegerField if field.get("integer") else forms.FloatField  # both refuse NaN and infinity
        bounds = {name: field[name] for name in ("min", "max") if name in field}  # the spinner stays within them
        widget = forms.NumberInput(attrs={**attrs, **bounds, "step": "1" if field.get("integer") else "any"})
        return numeric(**common, validators=validators, widget=widget)
    if kind == "select":
        if field.get("multiple"):
            return DistinctChoicesField(**common, choices=options(field), widget=forms.CheckboxSelectMultiple)
        # An empty first choice, required or not: a required list would otherwise send its first option for a
        # visitor who never chose (and with it Django renders `required`, the HTML placeholder-option rule).
        choices = [("", _("Choose…") if required else "—"), *options(field)]
        return forms.ChoiceField(**common, choices=choices)
    if kind == "checkbox":
        return forms.BooleanField(**common)
    if kind == "date":
        return forms.DateField(**common, input_formats=["%Y-%m-%d"], widget=forms.DateInput(attrs={"type": "date"}))
    if kind == "hidden":
        return forms.CharField(
            **common | {"required": False},
            max_length=TEXT_MAX,
            validators=[_text_only],
            widget=forms.HiddenInput,
            strip=False,
        )
    if kind == "file":
        upload = MultipleFileField(**common, max_files=field.get("max_files", 1))
        if field.get("accept"):  # the picker offers those types first; the upload handler still decides
            upload.widget.attrs["accept"] = ",".join(field["accept"])
        return upload
    raise ValueError(f"no such field type: {kind}")


def holds(condition: dict, value) -> bool:
    """Whether a visible_if condition holds for the value its field was given (None when that field is hidden)."""
    if "is_set" in condition:
        return _is_set(value) == condition["is_set"]
    if "equals" in condition:
        return _same(value, condition["equals"])
    if "not_equals" in condition:
        return not _same(value, condition["not_equals"])
    return any(_same(value, wanted) for wanted in condition["in"])


# A number as both sides read one from text (Python's float() also takes "1_8", JavaScript's Number() "0x12").
_DECIMAL = re.compile(r"\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _is_set(value) -> bool:
    return value not in (None, "", [], False)


def _same(value, wanted) -> bool:
    if isinstance(value, list):  # several options chosen: the condition holds when one of them is it
        return any(_same(item, wanted) for item in value)
    if isinstance(value, bool) or isinstance(wanted, bool):
        return value is wanted or str(value).lower() == str(wanted).lower()
    if isinstance(value, (int, float)):  # a number field's: 18.0 is 18 and "18", as static/forms.js compares
        if isinstance(wanted, (int, float)):
            return value == wanted
        return isinstance(wanted, str) and bool(_DECIMAL.fullmatch(wanted)) and value == float(wanted)
    return str(value if value is not None else "") == as_page_writes(wanted)


class FieldForm(forms.Form):
    """A form of a field list. Every field is rendered (a small script shows and hides them as answers change);
    those whose visible_if does not hold for the data given are never required and their values are dropped."""

    def __init__(self, fields: list, data=None, files=None, *, prefill=None):
        initial = _initial(fields, prefill)
        super().__init__(data, files, initial=initial)
        self.definition = fields
        self.visible = visible_fields(fields, data if data is not None else initial)
        for field in fields:
            self.fields[field["name"]] = django_field(field) if field["name"] in self.visible else _optional(field)
            if field.get("visible_if") and field.get("required"):
                # Marked required whether shown or not; static/forms.js sets `required` only while it is shown, on
                # the widgets that carry it at all (not a group of checkboxes: each one would have to be ticked).
                widget = self.fields[field["name"]].widget
                self.fields[field["name"]].marked_required = True
                if widget.use_required_attribute(None):
                    widget.attrs["data-required"] = ""
        self.conditions = {f["name"]: f["visible_if"] for f in fields if f.get("visible_if")}

    def full_clean(self):
        super().full_clean()
        if not self.is_bound:
            return
        for field in self.definition:
            name = field["name"]
            if name not in self.visible:
                self.cleaned_data.pop(name, None)
                self._errors.pop(name, None)
            elif _fixed(field, self.data):
                self.cleaned_data[name] = field.get("default", "")  # the author's value: the visitor may not set it
                self._errors.pop(name, None)

    def answers(self) -> dict:
        """The cleaned answers of the visible fields, JSON-ready (dates as ISO text); files for the caller to store."""
        return {
            name: value.isoformat() if isinstance(value, date) else value for name, value in self.cleaned_data.items()
        }

    def render(self, template_name=None, context=None, renderer=None):
        """The fields as templates/interfaces/_fields.html lays them out (a project template, not a form renderer's)."""
        if template_name is not None:  # a label or an error list, as Django's own templates lay them out
            return super().render(template_name, context, renderer)
        return render_to_string("interfaces/_fields.html", {"form": self, **(context or {})})

    __str__ = __html__ = render

    def rows(self):
        """(bound field, its visible_if as JSON or "", shown) for the template."""
        for name, bound in self._bound_items():
            condition = self.conditions.get(name)
            yield bound, json.dumps(condition) if condition else "", name in self.visible


def _optional(field: dict) -> forms.Field:
    return django_field({**field, "required": False})


def visible_fields(fields: list, data) -> set[str]:
    """The names of the fields shown for this data, in order: a field whose condition's field is hidden is hidden."""
    shown: set[str] = set()
    values: dict = {}
    for field in fields:
        condition = field.get("visible_if")
        if condition is not None and not holds(condition, values.get(condition["field"])):
            continue
        shown.add(field["name"])
        values[field["name"]] = _value(field, data)
    return shown


def _value(field: dict, data):
    """A field's value as its condition sees it: cleaned when it is valid, None when it is not."""
    if field["type"] == "file":
        return None
    if data is None:
        return None
    if _fixed(field, data):
        return field.get("default", "")
    raw = _raw(field, data)
    try:
        return django_field({**field, "required": False}).clean(raw)
    except ValidationError:
        return None


def _fixed(field: dict, data) -> bool:
    """A hidden field whose value is its default whatever is sent: it may not be prefilled, or was not sent."""
    return field["type"] == "hidden" and (not field.get("prefill", True) or field["name"] not in data)


def _raw(field: dict, data):
    name = field["name"]
    if field["type"] == "select" and field.get("multiple"):
        return data.getlist(name) if hasattr(data, "getlist") else data.get(name) or []
    return data.get(name)


def prefill_from(query_string: str) -> MultiValueDict:
    """A WSGI query string's values, with bytes that are no UTF-8 kept as lone surrogates, which _initial ignores.

    Django's request.GET shows them as U+FFFD instead, so broken Unicode in a
    link (%FF, an encoded surrogate, an overlong form) would be prefilled.
    """
    escaped = _RAW_BYTE.sub(lambda byte: f"%{ord(byte[0]):02X}", query_string)  # PEP 3333: the raw bytes, as latin-1
    values = MultiValueDict()
    for name, value in parse_qsl(escaped, keep_blank_values=True, errors="surrogateescape"):
        values.appendlist(name, value)
    return values


def _initial(fields: list, prefill) -> dict:
    """Defaults, then what the address's query string says for the fields that may be prefilled."""
    initial = {}
    for field in fields:
        name, kind = field["name"], field["type"]
        if "default" in field:
            initial[name] = field["default"]
        if prefill is None or kind == "file" or not field.get("prefill", True) or name not in prefill:
            continue
        if kind == "select" and field.get("multiple"):
            initial[name] = [item for item in prefill.getlist(name) if not _NOT_TEXT.search(item)]
        else:
            value = prefill.get(name, "")
            if not _NOT_TEXT.search(value):
                initial[name] = value[:TEXT_MAX] if kind != "long_text" else value[:LONG_TEXT_MAX]
    return initial
