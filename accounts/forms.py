"""The forms of accounts' pages: sign up, sign in, send the confirmation link again, the white-label domain."""

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm, SetPasswordForm
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from accounts import selectors
from hooks import signatures, verification
from hooks.models import Verification
from interfaces.whitelabel import logos


class SignUpForm(forms.Form):
    email = forms.EmailField(
        label=_("Email"),
        max_length=150,  # the address is the account's user name
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
    password = forms.CharField(
        label=_("Password"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    app = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["password"].help_text = " ".join(password_validation.password_validators_help_texts())

    def clean(self):
        cleaned = super().clean()
        email, password = cleaned.get("email"), cleaned.get("password")
        if email and password:
            email = selectors.normalize_email(email)
            try:
                password_validation.validate_password(password, get_user_model()(username=email, email=email))
            except ValidationError as error:
                self.add_error("password", error)
        return cleaned


class SignInForm(AuthenticationForm):
    """Django's sign-in form, asking for the email address; an unconfirmed account's owner is told to confirm."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("Please enter a correct email and password."),
        "unconfirmed": _("Confirm your email address first: open the link we sent you."),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = _("Email")
        self.fields["username"].widget.attrs["autocomplete"] = "username"

    def confirm_login_allowed(self, user):
        if not user.is_active and selectors.is_unconfirmed(user):
            raise ValidationError(self.error_messages["unconfirmed"], code="unconfirmed")
        super().confirm_login_allowed(user)


class EmailForm(forms.Form):
    email = forms.EmailField(
        label=_("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
    )


class NewPasswordForm(SetPasswordForm):
    """Django's form of a new password, its rules said as one sentence (its own help text is an HTML list)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].help_text = " ".join(password_validation.password_validators_help_texts())


class VerificationForm(forms.Form):
    """What an automation's webhook URL verifies (hooks/verification.py): the scheme, its secret, the tolerance and
    the allow list. A secret is never filled back in: left empty, the saved one stays."""

    scheme = forms.ChoiceField(label=_("Signature"), widget=forms.RadioSelect, required=False)
    secret = forms.CharField(
        label=_("New secret"),
        required=False,
        strip=True,
        max_length=500,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=_(
            "GitHub and Stripe: paste the secret the other app shows. Standard Webhooks: paste the sender's "
            "whsec_ secret, or leave this empty and generate one. Empty: the saved secret stays."
        ),
    )
    generate = forms.BooleanField(label=_("Generate a new Standard Webhooks secret"), required=False)
    keep_previous = forms.BooleanField(
        label=_("Keep accepting the current secret until I end the rotation"), required=False, initial=True
    )
    forget_previous = forms.BooleanField(label=_("End the rotation: forget the previous secret"), required=False)
    tolerance_seconds = forms.IntegerField(
        label=_("Timestamp tolerance (seconds)"),
        min_value=10,
        max_value=3600,
        initial=300,
        help_text=_("Standard Webhooks and Stripe: how far the signed time may be from ours. 300 is their default."),
    )
    allowed_networks = forms.CharField(
        label=_("Allowed addresses"),
        required=False,
        max_length=10_000,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "autocapitalize": "off", "class": "code"}),
        help_text=_(
            "One address or network (CIDR, such as 192.0.2.0/24 or 2001:db8::/32) a line. Empty: every address. "
            "Requests from any other get 403."
        ),
    )

    def __init__(self, *args, has_secret: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scheme"].choices = Verification.Scheme.choices
        self.has_secret = has_secret

    def clean_allowed_networks(self):
        try:
            return verification.networks_from(self.cleaned_data["allowed_networks"])
        except ValueError as error:
            if str(error).isdigit():
                raise ValidationError(
                    _("At most %(limit)s networks.") % {"limit": verification.MAX_NETWORKS}, code="too_many"
                ) from None
            raise ValidationError(
                _("Not an address or network: %(entry)s") % {"entry": error}, code="not_a_network"
            ) from None

    def clean(self):
        cleaned = super().clean()
        scheme, secret = cleaned.get("scheme", ""), cleaned.get("secret", "")
        if cleaned.get("generate") and scheme != signatures.STANDARD:
            self.add_error("generate", _("Only a Standard Webhooks secret is generated here."))
        if scheme == signatures.STANDARD and secret:
            try:
                signatures.standard_key(secret)
            except ValueError:
                self.add_error(
                    "secret", _("A Standard Webhooks secret is whsec_ followed by at least 16 bytes in base64.")
                )
        elif scheme and secret and len(secret) < 8:
            self.add_error("secret", _("The secret is too short to be one."))
        changing = scheme != self.initial.get("scheme")
        if scheme and not secret and not cleaned.get("generate") and (changing or not self.has_secret):
            if scheme == signatures.STANDARD:
                cleaned["generate"] = True  # a Standard Webhooks URL always starts with a secret of its own
            else:
                self.add_error("secret", _("Paste the secret the other app shows for this URL."))
        return cleaned


class BrandForm(forms.Form):
    """The owner's white-label domain, the name its pages show, and a new logo (checked by its bytes)."""

    domain = forms.CharField(
        label=_("Domain"),
        max_length=253,
        help_text=_("Such as forms.example.com; a port only if it is not 80 or 443."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "off", "spellcheck": "false"}),
    )
    name = forms.CharField(
        label=_("Name shown"),
        max_length=100,
        required=False,
        help_text=_("Shown on the domain's pages, and as the logo's text. Empty: the pages show no name."),
    )
    logo = forms.FileField(
        label=_("New logo"),
        required=False,
        help_text=format_lazy(
            _("PNG, JPEG, WebP or GIF, at most {limit} KB. SVG is not accepted."), limit=logos.MAX_BYTES // 1024
        ),
        widget=forms.FileInput(attrs={"accept": "image/png,image/jpeg,image/webp,image/gif"}),
    )

    def clean_logo(self) -> logos.Logo | None:
        upload = self.cleaned_data.get("logo")
        return logos.read_logo(upload) if upload else None
