"""Read-side queries of the catalog."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog.models import App


def retirement_cutoff(now: datetime | None = None) -> datetime:
    """Apps retired before this moment have left the feed and the app picker."""
    return (now or timezone.now()) - timedelta(days=settings.CATALOG_RETIREMENT_DAYS)


def connectable_apps(now: datetime | None = None) -> QuerySet[App]:
    """Apps a user can connect: the one visibility rule of the app picker and the feed.

    An app is connectable when it is published and either not retired or
    retired less than the retirement window ago. A retired app stays listed
    through the window so existing users can still find and reconnect it;
    after the window it disappears everywhere at once.
    """
    return App.objects.filter(published=True).filter(
        Q(retired_at__isnull=True) | Q(retired_at__gt=retirement_cutoff(now))
    )
