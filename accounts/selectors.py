"""Reads of accounts: by email or user name, without regard to case; whether a sign-up still waits."""

from django.contrib.auth import get_user_model
from django.db.models import Q


def normalize_email(email: str) -> str:
    """The form an address is kept and compared in: trimmed, lower case."""
    return email.strip().lower()


def account_for_sign_in(name: str):
    """The account whose user name is `name`, exactly, else the only one matching it without regard to case."""
    users = get_user_model().objects
    name = name.strip()
    exact = users.filter(username=name).first()
    if exact is not None:
        return exact
    matches = list(users.filter(username__iexact=name)[:2])
    return matches[0] if len(matches) == 1 else None


def account_holding_email(email: str):
    """An account whose user name or email is this address (any case), the oldest first; None when it is free."""
    email = normalize_email(email)
    return get_user_model().objects.filter(Q(username__iexact=email) | Q(email__iexact=email)).order_by("pk").first()


def is_unconfirmed(user) -> bool:
    """True for an account made at /signup whose address is not confirmed yet (not one an administrator turned off)."""
    from accounts.models import SignUp

    return not user.is_active and SignUp.objects.filter(user=user, confirmed_at__isnull=True).exists()


def pending_signup_for_token(token: str):
    """The unconfirmed SignUp a confirmation token names; None for an altered, expired, used or replaced link."""
    from accounts import tokens
    from accounts.models import SignUp

    user_id = tokens.user_id_of(token)
    signup = (
        SignUp.objects.select_related("user").filter(user_id=user_id or 0, confirmed_at__isnull=True).first()
    )  # a query for a bad token too: every link that fails costs the same
    if signup is None or not tokens.matches(token, signup.user):
        return None
    return signup
