"""The forms of accounts' pages: sign up, sign in, send the confirmation link again, the white-label domain."""

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm, SetPasswordForm
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from accounts import selectors
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
