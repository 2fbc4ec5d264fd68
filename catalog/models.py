"""Apps, their operations, and the materialized feed documents served from them."""

import re

from django.core.validators import RegexValidator
from django.db import models

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
slug_validator = RegexValidator(SLUG_PATTERN, "Lowercase letters, digits and single hyphens between them.")
_SLUG = re.compile(SLUG_PATTERN)


def is_slug(text: str) -> bool:
    """Whether text can be an app's slug: what is not is answered without a query (a NUL would fail one)."""
    return len(text) <= 64 and _SLUG.fullmatch(text) is not None


class App(models.Model):
    """A connectable app. Fields under "internal" never appear in the feed."""

    slug = models.CharField(max_length=64, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    category = models.CharField(max_length=100, blank=True, null=True)
    auth_type = models.CharField(
        max_length=40,
        help_text="How the app connects: api_key, none, oauth_v2, managed_auth, token_mint (the set may grow).",
        validators=[RegexValidator(r"^[a-z][a-z0-9_]*$", "Lowercase letters, digits and underscores.")],
    )
    app_domain = models.CharField(max_length=253)
    popularity = models.PositiveBigIntegerField(
        default=0, help_text="Popularity figure (say, active connections). 0 means unranked (tier D)."
    )
    published = models.BooleanField(
        default=True, help_text="Shown in the app picker and the feed. Drafts in the connector builder are unpublished."
    )
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="When the app was withdrawn. It stays in the feed for the retirement window."
    )
    logo = models.BinaryField(null=True, blank=True, editable=True)
    logo_content_type = models.CharField(max_length=100, blank=True)

    # Internal: how the platform talks to the app.
    auth_config = models.JSONField(default=dict, blank=True)

    # Written by the feed build (catalog.feed), read by admin filters.
    tier = models.CharField(max_length=1, blank=True, editable=False)
    sort_order = models.PositiveIntegerField(null=True, blank=True, editable=False)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        indexes = [models.Index(fields=["published", "retired_at"])]

    def __str__(self) -> str:
        return self.name


class Operation(models.Model):
    """A trigger or an action of an app. Only name and description are published."""

    class Kind(models.TextChoices):
        TRIGGER = "trigger"
        ACTION = "action"

    class DeliveryMode(models.TextChoices):
        NONE = "", "Not a webhook trigger"
        MANUAL = "manual"
        SELF_REGISTERING = "self_registering"
        PER_CONNECTION = "per_connection"
        SHARED_ENDPOINT = "shared_endpoint"

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="operations")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=100, help_text="Internal identifier, unique per app and kind.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)
    listed = models.BooleanField(default=True, help_text="Unlisted operations are hidden from the feed.")

    # Internal: how the operation is carried out.
    endpoint = models.CharField(max_length=500, blank=True)
    http_method = models.CharField(max_length=10, blank=True)
    request_template = models.JSONField(default=dict, blank=True)
    delivery_mode = models.CharField(max_length=20, choices=DeliveryMode.choices, blank=True)
    instructions = models.TextField(
        blank=True,
        help_text="A manual webhook trigger's steps for its owner: where to paste the webhook URL in the app.",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["app", "kind", "position", "key"]
        constraints = [models.UniqueConstraint(fields=["app", "kind", "key"], name="operation_unique_key_per_app")]

    def __str__(self) -> str:
        return f"{self.app.slug} {self.kind} {self.key}"


class FeedDocument(models.Model):
    """A stored feed body: the list, one app's detail, or the bulk artifact.

    Bodies are built when the catalog changes and served as these bytes, so
    the last good body survives a catalog that cannot be read.
    """

    key = models.CharField(max_length=100, unique=True)  # "list", "bulk", "app:<slug>"
    body = models.BinaryField()
    gzip_body = models.BinaryField()
    etag = models.CharField(max_length=80)
    generated_at = models.DateTimeField()
    slugs = models.JSONField(default=list, blank=True)  # list and bulk: apps they name, in order
    # list: the digest of the rows it was built from (catalog.sources), so an unchanged catalog is told cheaply
    sources = models.CharField(max_length=64, blank=True, default="")

    def __str__(self) -> str:
        return self.key
