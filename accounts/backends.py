"""Sign-in by email address (or a staff user's name), matched without regard to case."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from accounts import selectors


class EmailBackend(ModelBackend):
    """Django's ModelBackend with a case-insensitive lookup; an unconfirmed sign-up's right password is returned.

    Returning the unconfirmed account lets the sign-in form say "confirm your address" to whoever knows its
    password, and no one else (AuthenticationForm.confirm_login_allowed refuses it, as any inactive account).
    get_user() is ModelBackend's: an inactive account never has a session.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        user = selectors.account_for_sign_in(username)
        if user is None:
            get_user_model()().set_password(password)  # a missing account costs one hash too (Django #20760)
            return None
        if user.check_password(password) and (self.user_can_authenticate(user) or selectors.is_unconfirmed(user)):
            return user
        return None

    async def aauthenticate(self, request, username=None, password=None, **kwargs):
        from asgiref.sync import sync_to_async

        return await sync_to_async(self.authenticate)(request, username=username, password=password, **kwargs)
