"""Files sent with a form: count, size and type enforced while the body streams, then kept with Django's storage API.

A file past its field's limits is skipped as soon as it passes them (its
bytes are read and dropped, so that the form's other answers still arrive
and are shown again), and a body whose files together pass every field's
limits stops being read at once. What was refused is shown beside its field.
"""

import logging
import uuid
from dataclasses import dataclass
from fnmatch import fnmatch

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile, StopUpload, TemporaryFileUploadHandler
from django.db import DatabaseError
from django.urls import reverse
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _

from automations import jsonsafe
from interfaces.models import FormFile

logger = logging.getLogger(__name__)
# What a form's body may hold besides its files and answers: multipart boundaries and part headers.
FORM_OVERHEAD_BYTES = 64 * 1024
# The longest file name kept (FormFile.name), as most file systems allow: a longer one is refused, not cut.
MAX_NAME_CHARS = 255


def limits_of(fields: list) -> dict[str, dict]:
    """Each file field's limits: how many files, how many bytes each (capped by FORM_FILE_MAX_BYTES), which types."""
    return {
        field["name"]: {
            "max_files": field.get("max_files", 1),
            "max_bytes": min(field.get("max_bytes", settings.FORM_FILE_MAX_BYTES), settings.FORM_FILE_MAX_BYTES),
            "accept": field.get("accept", []),
        }
        for field in fields
        if field["type"] == "file"
    }


def accepted(name: str, content_type: str, accept: list) -> bool:
    if not accept:
        return True
    lowered = name.lower()
    return any(
        lowered.endswith(rule.lower()) if rule.startswith(".") else fnmatch(content_type.lower(), rule)
        for rule in accept
    )


class LimitedUploadHandler(TemporaryFileUploadHandler):
    """Django's upload handler to disk, that refuses a file past its field's limits as the bytes arrive."""

    def __init__(self, request, limits: dict[str, dict]):
        super().__init__(request)
        self.limits = limits
        self.counts: dict[str, int] = {}
        self.refused: dict[str, str] = {}  # field name: why, shown beside the field
        self.total = 0
        self.cap = sum(limit["max_files"] * limit["max_bytes"] for limit in limits.values())

    def new_file(self, field_name, file_name, content_type, content_length, charset=None, content_type_extra=None):
        limit = self.limits.get(field_name)
        if limit is None:
            raise SkipFile()  # no file field of that name: nothing of it is kept
        self.counts[field_name] = self.counts.get(field_name, 0) + 1
        if self.counts[field_name] > limit["max_files"]:
            self._refuse(field_name, _("Send at most %(count)d files.") % {"count": limit["max_files"]})
        if not accepted(file_name, content_type or "", limit["accept"]):
            self._refuse(field_name, _("This type of file is not accepted here."))
        if content_length is not None and content_length > limit["max_bytes"]:
            self._refuse(field_name, _too_large(limit))
        if len(file_name) > MAX_NAME_CHARS:
            message = _("A file's name may be at most %(count)d characters long. Rename it and choose it again.")
            self._refuse(field_name, message % {"count": MAX_NAME_CHARS})
        self.size = 0
        FileUploadHandler.new_file(
            self, field_name, file_name, content_type, content_length, charset, content_type_extra
        )
        # Django names the temporary file after the sent name's extension, which a name of many accented
        # characters makes longer than the file system allows: it is named by us, and keeps the sent name.
        self.file = TemporaryUploadedFile("upload", self.content_type, 0, self.charset, self.content_type_extra)
        self.file.name = file_name

    def receive_data_chunk(self, raw_data, start):
        self.size += len(raw_data)
        self.total += len(raw_data)
        limit = self.limits[self.field_name]
        if self.total > self.cap:
            self.refused.setdefault(self.field_name, _too_large(limit))
            raise StopUpload(connection_reset=True)  # more than every file together may hold: read no further
        if self.size > limit["max_bytes"]:
            self._refuse(self.field_name, _too_large(limit))
        return super().receive_data_chunk(raw_data, start)

    def _refuse(self, field_name: str, message: str):
        self.refused.setdefault(field_name, message)
        raise SkipFile()


def _too_large(limit: dict) -> str:
    return _("Each file may be at most %(size)s.") % {"size": _human(limit["max_bytes"])}


def _human(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:g} {unit}" if unit == "bytes" else f"{size:.1f} {unit}".replace(".0 ", " ")
        size /= 1024
    return str(size)


@dataclass(frozen=True)
class Saved:
    """A file kept in the storage, not yet recorded: its name and type as sent, its size, and where it is."""

    name: str
    size: int
    content_type: str
    path: str
    folder: str


def save(*, automation, files: list) -> list[Saved]:
    """Keep each uploaded file with the storage API, each in a folder of its own; before any transaction, so that
    none is held open while files are copied."""
    saved = []
    for upload in files:
        name = jsonsafe.clean_text(upload.name or "file")[:255]
        try:
            safe = get_valid_filename(name)[:100]
        except SuspiciousFileOperation:
            safe = "file"
        content_type = jsonsafe.clean_text(upload.content_type or "application/octet-stream")[:255]
        folder = f"forms/{automation.pk}/{uuid.uuid4().hex}"
        path = default_storage.save(f"{folder}/{safe}", upload)
        saved.append(Saved(name, upload.size, content_type, path, folder))
    return saved


def record(*, automation, field: str, saved: list[Saved]) -> list[dict]:
    """The files' rows, in the answer's transaction; what steps get of each: name, size, type and a link only the
    owner opens."""
    kept = []
    for one in saved:
        row = FormFile.objects.create(
            automation=automation,
            field=field,
            name=one.name,
            size=one.size,
            content_type=one.content_type,
            path=one.path,
        )
        url = settings.BASE_URL + reverse("form-file", args=[row.pk])
        kept.append({"name": one.name, "size": one.size, "type": one.content_type, "url": url})
    return kept


def recorded(saved: list[Saved]) -> bool:
    """Whether the files' rows were committed (False when the database cannot say)."""
    try:
        return bool(saved) and FormFile.objects.filter(path=saved[0].path).exists()
    except DatabaseError:
        return False


def remove(saved: list[Saved]) -> None:
    """Files saved for an answer that was not committed (a lost race, an error), with their folders."""
    for one in saved:
        try:
            _delete_tree(one.folder)
        except Exception:
            logger.exception("files of an answer not taken could not be removed from %s", one.folder)


def delete_files_of(automation) -> None:
    """A deleted automation's files go with it (their rows went with its delete): its folder, with the storage API.

    Called once the delete has committed (automations.signals.deleted).
    A file that cannot be removed is logged and left: the delete has happened.
    """
    folder = f"forms/{automation.pk}"
    try:
        _delete_tree(folder)
    except Exception:
        logger.exception("files of deleted automation %s could not all be removed from %s", automation.pk, folder)


def _delete_tree(folder: str) -> None:
    if not default_storage.exists(folder):
        return
    folders, files = default_storage.listdir(folder)
    for name in files:
        default_storage.delete(f"{folder}/{name}")
    for name in folders:
        _delete_tree(f"{folder}/{name}")
    default_storage.delete(folder)  # the local disk's empty folder (other storages have none)
