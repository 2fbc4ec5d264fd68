"""A white-label logo is known by its first bytes: PNG, JPEG, WebP and GIF are; SVG and everything else are not."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given
from hypothesis import strategies as st

from interfaces.tests.support import png
from interfaces.whitelabel import logos

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 "
GIF = b"GIF87a\x01\x00\x01\x00"


@pytest.mark.parametrize(
    ("content", "content_type"),
    [(png(), "image/png"), (JPEG, "image/jpeg"), (WEBP, "image/webp"), (GIF, "image/gif")],
)
def test_each_accepted_format_is_known_by_its_bytes_whatever_it_claims(content, content_type):
    logo = logos.read_logo(SimpleUploadedFile("logo.svg", content, "image/svg+xml"))
    assert logo.content == content and logo.content_type == content_type
    assert logo.digest == logos.digest_of(content) and len(logo.digest) == 32


@pytest.mark.parametrize(
    "content",
    [
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        b"\xef\xbb\xbf<?xml version='1.0'?><svg/>",
        b"RIFF\x24\x00\x00\x00WAVEfmt ",  # RIFF, but sound
        b"\x00\x00\x01\x00",  # an icon file
        b"GIF88a",
    ],
)
def test_anything_else_is_refused(content):
    with pytest.raises(ValidationError) as refused:
        logos.read_logo(SimpleUploadedFile("logo.png", content, "image/png"))
    assert refused.value.code == "not_an_image"


def test_a_file_exactly_at_the_limit_passes_and_one_byte_more_does_not():
    at_limit = png() + b"\x00" * (logos.MAX_BYTES - len(png()))
    assert logos.read_logo(SimpleUploadedFile("a.png", at_limit)).content == at_limit
    with pytest.raises(ValidationError) as refused:
        logos.read_logo(SimpleUploadedFile("a.png", at_limit + b"\x00"))
    assert refused.value.code == "too_large" and "256 KB" in refused.value.messages[0]


@given(st.binary(max_size=64))
def test_any_bytes_are_a_known_image_type_or_none_without_crashing(head):
    assert logos.sniffed_type(head) in (None, "image/png", "image/jpeg", "image/gif", "image/webp")
