"""Files sent through hosted forms."""

import uuid

from django.db import models


class FormFile(models.Model):
    """A file a visitor sent with a form, kept with Django's storage API; only its automation's owner opens it.

    Steps get its name, size, type and link (/form/files/<id>, sign-in
    required). The id is a random UUID, yet not the credential: the owner's
    session is.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    automation = models.ForeignKey("automations.Automation", on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=40)
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=255)
    path = models.CharField(max_length=500, help_text="Its name in the storage.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"
