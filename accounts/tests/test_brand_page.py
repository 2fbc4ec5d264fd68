"""Your domain and brand (/account/brand): an owner sets only their own white-label domain, name and logo."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from interfaces.models import WhiteLabelDomain
from interfaces.tests.support import png
from interfaces.whitelabel import domains, logos

pytestmark = pytest.mark.django_db

PAGE = "/account/brand"
SVG = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def theirs(another_account):
    """Another account's domain, name and logo."""
    content = png()
    return WhiteLabelDomain.objects.create(
        owner=another_account,
        domain="forms.other.example",
        name="Other Co",
        logo=content,
        logo_content_type="image/png",
        logo_digest=logos.digest_of(content),
    )


def upload(content: bytes, name: str = "logo.png", content_type: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type)


def save(client, capture, **data):
    with capture(execute=True):
        return client.post(PAGE, {"domain": "forms.acme.example", "name": "Acme", **data})


def error_of(response) -> str:
    """The text beside the fields: every error the page wrote."""
    import re

    return " ".join(re.findall(r'class="field__error"[^>]*>([^<]*)<', response.content.decode()))


# Failure paths first.


def test_signed_out_visitors_are_sent_to_sign_in(client, theirs):
    for method, path in (
        ("get", PAGE),
        ("post", PAGE),
        ("get", reverse("account-brand-logo")),
        ("post", reverse("account-brand-remove-logo")),
        ("post", reverse("account-brand-remove")),
    ):
        response = getattr(client, method)(path, {"domain": "x.example"} if method == "post" else None)
        assert response.status_code == 302 and response["Location"].startswith("/login?next="), path
    assert WhiteLabelDomain.objects.get() == theirs


def test_another_owner_s_domain_is_never_shown_or_served_and_cannot_be_changed(
    signed_in, theirs, django_capture_on_commit_callbacks
):
    page = signed_in.get(PAGE)
    assert page.status_code == 200
    assert b"forms.other.example" not in page.content and b"Other Co" not in page.content
    assert signed_in.get(reverse("account-brand-logo")).status_code == 404  # only one's own logo, and there is none
    with django_capture_on_commit_callbacks(execute=True):
        signed_in.post(reverse("account-brand-remove-logo"))
        signed_in.post(reverse("account-brand-remove"))
    theirs.refresh_from_db()
    assert theirs.logo_digest and theirs.name == "Other Co"


def test_a_domain_another_account_uses_is_refused_by_name(signed_in, theirs, django_capture_on_commit_callbacks):
    response = save(signed_in, django_capture_on_commit_callbacks, domain="Forms.Other.Example.")
    assert response.status_code == 400
    assert "Another account uses this domain" in error_of(response)
    assert list(WhiteLabelDomain.objects.values_list("domain", flat=True)) == ["forms.other.example"]


def test_two_owners_saving_one_domain_at_once_get_an_error_not_a_500(owner, theirs, monkeypatch):
    from interfaces.whitelabel import services

    # Both pass the check before either has saved; the unique index refuses the second.
    monkeypatch.setattr(services, "taken_by_another", lambda **kwargs: False)
    with pytest.raises(services.ValidationError) as refused:
        services.save_domain(owner=owner, domain="forms.other.example", name="")
    assert refused.value.message_dict == {"domain": [services.taken_message()]}
    assert not WhiteLabelDomain.objects.filter(owner=owner).exists()


@pytest.mark.parametrize(
    "domain",
    ["not a host", "https://forms.acme.example/", "localhost", "-x.example", "testserver", ""],
)
def test_what_is_not_a_host_name_is_refused(signed_in, domain, django_capture_on_commit_callbacks):
    response = save(signed_in, django_capture_on_commit_callbacks, domain=domain)
    assert response.status_code == 400 and error_of(response)
    assert b'aria-invalid="true"' in response.content
    assert not WhiteLabelDomain.objects.exists()


def test_the_service_s_own_hosts_are_refused(signed_in, settings, django_capture_on_commit_callbacks):
    settings.HOOKS_URL = "https://hooks.example.com"
    for domain in ("hooks.example.com", "HOOKS.example.com:443"):
        response = save(signed_in, django_capture_on_commit_callbacks, domain=domain)
        assert response.status_code == 400
        assert "host of the service itself" in error_of(response)
    assert not WhiteLabelDomain.objects.exists()


def test_a_logo_over_the_limit_is_refused_saying_the_limit(signed_in, django_capture_on_commit_callbacks):
    too_large = png() + b"\x00" * logos.MAX_BYTES
    response = save(signed_in, django_capture_on_commit_callbacks, logo=upload(too_large))
    assert response.status_code == 400
    assert "larger than 256 KB, the limit" in error_of(response)
    assert not WhiteLabelDomain.objects.exists()  # nothing saved, the domain neither


@pytest.mark.parametrize(
    ("content", "name", "content_type"),
    [
        (SVG, "logo.svg", "image/svg+xml"),
        (SVG, "logo.png", "image/png"),  # an SVG called a PNG
        (b"<html><script>alert(1)</script></html>", "logo.png", "image/png"),
        (b"BM" + b"\x00" * 64, "logo.bmp", "image/bmp"),
        (b"\x89PNX" + b"\x00" * 64, "logo.png", "image/png"),  # almost a PNG
    ],
)
def test_what_is_not_a_png_jpeg_webp_or_gif_by_its_bytes_is_refused(
    signed_in, content, name, content_type, django_capture_on_commit_callbacks
):
    response = save(signed_in, django_capture_on_commit_callbacks, logo=upload(content, name, content_type))
    assert response.status_code == 400
    assert "not a PNG, JPEG, WebP or GIF image (SVG is not accepted)" in error_of(response)
    assert not WhiteLabelDomain.objects.exists()


def test_an_empty_file_is_refused(signed_in, django_capture_on_commit_callbacks):
    response = save(signed_in, django_capture_on_commit_callbacks, logo=upload(b""))
    assert response.status_code == 400 and "empty" in error_of(response)
    assert not WhiteLabelDomain.objects.exists()


def test_changes_need_the_csrf_token(owner, django_capture_on_commit_callbacks):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    assert save(strict, django_capture_on_commit_callbacks).status_code == 403
    assert strict.post(reverse("account-brand-remove")).status_code == 403
    assert not WhiteLabelDomain.objects.exists()


def test_other_methods_change_nothing(signed_in):
    assert signed_in.put(PAGE).status_code == 405
    assert signed_in.get(reverse("account-brand-remove")).status_code == 405
    assert signed_in.get(reverse("account-brand-remove-logo")).status_code == 405


# What works.


def test_an_owner_sets_domain_name_and_logo_and_the_domain_serves_them_at_once(
    signed_in, owner, django_capture_on_commit_callbacks
):
    domains.public_base_url(owner)  # the table remembered before the change
    saved = save(signed_in, django_capture_on_commit_callbacks, domain=" Forms.Acme.Example. ", logo=upload(png()))
    assert saved.status_code == 302 and saved["Location"] == PAGE
    row = WhiteLabelDomain.objects.get(owner=owner)
    assert (row.domain, row.name, row.logo_content_type) == ("forms.acme.example", "Acme", "image/png")
    assert bytes(row.logo) == png() and row.logo_digest == logos.digest_of(png())
    assert domains.public_base_url(owner) == "http://forms.acme.example"
    page = signed_in.get(PAGE)
    html = page.content.decode()
    assert "Saved." in html and 'value="forms.acme.example"' in html and 'value="Acme"' in html
    assert f'src="/account/brand/logo?v={row.logo_digest}" alt="Acme"' in html
    assert "<code>forms.acme.example</code>" in html and "CNAME" in html  # the DNS record to add
    preview = signed_in.get(reverse("account-brand-logo"))
    assert preview.content == png() and preview["Content-Type"] == "image/png"
    assert preview["X-Content-Type-Options"] == "nosniff" and preview["Cache-Control"] == "private, no-cache"
    assert signed_in.get(reverse("account-brand-logo"), HTTP_IF_NONE_MATCH=preview["ETag"]).status_code == 304
    served = Client().get("/brand/logo", HTTP_HOST="forms.acme.example")
    assert served.status_code == 200 and served.content == png()


def test_the_type_stored_is_the_one_the_bytes_prove_not_the_one_claimed(
    signed_in, owner, django_capture_on_commit_callbacks
):
    gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
    save(signed_in, django_capture_on_commit_callbacks, logo=upload(gif, "logo.png", "image/png"))
    assert WhiteLabelDomain.objects.get(owner=owner).logo_content_type == "image/gif"


def test_saving_without_a_file_keeps_the_logo_and_the_logo_can_be_removed(
    signed_in, owner, django_capture_on_commit_callbacks
):
    save(signed_in, django_capture_on_commit_callbacks, logo=upload(png()))
    save(signed_in, django_capture_on_commit_callbacks, name="Acme Renamed")
    row = WhiteLabelDomain.objects.get(owner=owner)
    assert row.name == "Acme Renamed" and row.logo_digest
    with django_capture_on_commit_callbacks(execute=True):
        removed = signed_in.post(reverse("account-brand-remove-logo"))
    assert removed.status_code == 302
    row.refresh_from_db()
    assert row.logo is None and row.logo_digest == "" and row.name == "Acme Renamed"
    assert "The logo is removed." in signed_in.get(PAGE).content.decode()  # before a 404 page shows the message
    assert signed_in.get(reverse("account-brand-logo")).status_code == 404
    assert Client().get("/brand/logo", HTTP_HOST="forms.acme.example").status_code == 404


def test_removing_the_domain_moves_the_urls_back_at_once(signed_in, owner, django_capture_on_commit_callbacks):
    save(signed_in, django_capture_on_commit_callbacks)
    assert domains.public_base_url(owner) == "http://forms.acme.example"
    with django_capture_on_commit_callbacks(execute=True):
        signed_in.post(reverse("account-brand-remove"))
    assert not WhiteLabelDomain.objects.exists()
    assert domains.public_base_url(owner) != "http://forms.acme.example"
    assert Client().get("/brand/logo", HTTP_HOST="forms.acme.example").status_code in (400, 404)


def test_the_automations_page_links_to_the_brand_page(signed_in):
    assert f'href="{PAGE}"' in signed_in.get(reverse("account-automations")).content.decode()


def test_admin_still_sets_a_domain_with_its_name_and_a_checked_logo(staff_client, owner):
    refused = staff_client.post(
        "/admin/interfaces/whitelabeldomain/add/",
        {"owner": owner.pk, "domain": "forms.acme.example", "name": "Acme", "logo_file": upload(SVG, "x.png")},
    )
    assert refused.status_code == 200 and not WhiteLabelDomain.objects.exists()
    added = staff_client.post(
        "/admin/interfaces/whitelabeldomain/add/",
        {"owner": owner.pk, "domain": "forms.acme.example", "name": "Acme", "logo_file": upload(png())},
    )
    assert added.status_code == 302
    row = WhiteLabelDomain.objects.get()
    assert row.name == "Acme" and row.logo_content_type == "image/png"
    staff_client.post(
        f"/admin/interfaces/whitelabeldomain/{row.pk}/change/",
        {"owner": owner.pk, "domain": "forms.acme.example", "name": "Acme", "remove_logo": "on"},
    )
    row.refresh_from_db()
    assert row.logo is None and row.logo_digest == ""
