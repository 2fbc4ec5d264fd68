"""Who sees a URL key in Django admin: its automation's owner and superusers, no other staff.

A key is a password (DESIGN.md contract 3). Staff who may view automations
run the service and see every automation, run and queue; only the owner,
and superusers (who hold every permission anyway), see the URLs that carry
keys. Others see where the URL would be, and that it is the owner's.
"""

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet, Value

HIDDEN = "shown to its owner only"


def with_key_visibility(queryset: QuerySet, request, owner_field: str) -> QuerySet:
    """The queryset with key_visible on each row, for the signed-in staff member of request."""
    if request.user.is_superuser:
        return queryset.annotate(key_visible=Value(True))
    mine = ExpressionWrapper(Q(**{owner_field: request.user.pk}), output_field=BooleanField())
    return queryset.annotate(key_visible=mine)


def visible(row) -> bool:
    return getattr(row, "key_visible", False)
