"""Writes of accounts: sign up, confirm the address, send the link again."""

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import mail, selectors
from accounts.models import SignUp


@transaction.atomic
def sign_up(*, email: str, password: str, app_slug: str = "") -> None:
    """Make an inactive account for this address and mail its confirmation link.

    An address already taken gets no account: its owner is mailed a notice instead. One whose account is still
    unconfirmed starts over: the new password and app, a new link; links sent before stop working. Each way
    hashes the password once and sends one mail, so that the caller's answer tells nothing of the address.
    """
    email = selectors.normalize_email(email)
    existing = selectors.account_holding_email(email)
    if existing is None:
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(email, email, password, is_active=False)
                SignUp.objects.create(user=user, app_slug=app_slug)
        except IntegrityError:  # the same address signed up at the same moment, and that one committed first
            existing = selectors.account_holding_email(email)
            if existing is None:
                return
        else:
            transaction.on_commit(lambda: mail.send_confirmation(user))
            return
    if selectors.is_unconfirmed(existing):
        existing.set_password(password)
        existing.save(update_fields=["password"])
        SignUp.objects.filter(user=existing).update(app_slug=app_slug)
        transaction.on_commit(lambda: mail.send_confirmation(existing))
    else:
        make_password(password)  # the cost of the account the other ways make
        transaction.on_commit(lambda: mail.send_taken_notice(existing, app_slug=app_slug))


def send_confirmation_again(*, email: str) -> None:
    """Mail a new confirmation link when this address's account waits for one; nothing otherwise."""
    user = selectors.account_holding_email(email)
    if user is not None and selectors.is_unconfirmed(user):
        mail.send_confirmation(user)


@transaction.atomic
def confirm_email(*, signup: SignUp) -> bool:
    """Turn the account on and note its address confirmed; False when another request confirmed it first."""
    signup = SignUp.objects.select_for_update().select_related("user").get(pk=signup.pk)
    if signup.confirmed_at is not None:
        return False
    signup.confirmed_at = timezone.now()
    signup.save(update_fields=["confirmed_at"])
    signup.user.is_active = True
    signup.user.save(update_fields=["is_active"])
    return True
