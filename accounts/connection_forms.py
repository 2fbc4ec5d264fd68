"""The forms of the connections pages: a name, and a pasted key that is never filled back in."""

from django import forms
from django.utils.translation import gettext_lazy as _

from connections import services
from connections.models import Connection

LABEL_LENGTH = Connection._meta.get_field("label").max_length


class LabelForm(forms.Form):
    label = forms.CharField(
        label=_("Name"),
        max_length=LABEL_LENGTH,
        help_text=_("Your name for this account, such as “Sales team”: automations and this page show it."),
    )

    def clean_label(self):
        label = self.cleaned_data["label"]
        if problem := services.label_problem(label):
            raise forms.ValidationError(problem)
        return label


class CredentialForm(forms.Form):
    credential = forms.CharField(
        label=_("API key"),
        max_length=services.MAX_CREDENTIAL,
        strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=_(
            "Copy it from the app's settings. It is stored encrypted; afterwards only its last characters show."
        ),
    )

    def __init__(self, *args, field_label=None, **kwargs):
        super().__init__(*args, **kwargs)
        if field_label:
            self.fields["credential"].label = field_label

    def clean_credential(self):
        credential = self.cleaned_data["credential"]
        if problem := services.credential_problem(credential):
            raise forms.ValidationError(problem)
        return credential


class ConnectForm(LabelForm, CredentialForm):
    field_order = ["label", "credential"]

    def __init__(self, *args, takes_credential: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        if not takes_credential:
            del self.fields["credential"]
