"""Self-service sign-ups: the account stays inactive until the emailed link confirms its address."""

from django.conf import settings
from django.db import models


class SignUp(models.Model):
    """One account made at /signup; `confirmed_at` is empty until its link is used (docs/accounts.md)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signup")
    # The app named by the feed's connect_url (/signup?app=<slug>), offered once the account signs in.
    app_slug = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"sign-up of {self.user}"
