"""What a white-label logo may be: PNG, JPEG, WebP or GIF, known by its first bytes, at most MAX_BYTES.

The browser's claimed type and the file's name are not trusted: the type
stored and served is the one the bytes prove. SVG is refused, whatever it
is called: it is a document that can carry script, and the logo is served
from the account's own domain.
"""

import hashlib
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

MAX_BYTES = 256 * 1024
# Enough bytes to hold every signature below.
SNIFF_BYTES = 16


class Logo(NamedTuple):
    content: bytes
    content_type: str
    digest: str


def sniffed_type(head: bytes) -> str | None:
    """The image type these first bytes begin, or None for anything else (SVG, HTML, text, other images)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def digest_of(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()[:32]


def read_logo(upload) -> Logo:
    """The upload as a logo, or ValidationError saying what is wrong with it (the limit named when it is too large).

    upload is a Django UploadedFile; its size is checked before its bytes are read.
    """
    if upload.size == 0:
        raise ValidationError(_("The file is empty."), code="empty")
    upload.seek(0)
    content = upload.read(MAX_BYTES + 1) if upload.size <= MAX_BYTES else b""
    if upload.size > MAX_BYTES or len(content) > MAX_BYTES:  # the second: a size the upload misreported
        raise ValidationError(
            _("The logo is larger than %(limit)s KB, the limit. Make it smaller and try again.")
            % {"limit": MAX_BYTES // 1024},
            code="too_large",
        )
    content_type = sniffed_type(content[:SNIFF_BYTES])
    if content_type is None:
        raise ValidationError(
            _("This file is not a PNG, JPEG, WebP or GIF image (SVG is not accepted)."), code="not_an_image"
        )
    return Logo(content, content_type, digest_of(content))
