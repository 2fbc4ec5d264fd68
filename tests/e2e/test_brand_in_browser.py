"""A white-label domain's brand in Chromium against gunicorn: an owner sets name and logo on /account/brand, and a
form on their domain shows them (never the service's name), at a desktop's and a phone's width.

The domain is forms.localhost: Chromium sends every *.localhost name to this machine itself, so the browser reaches
gunicorn by a second name, as it would an account's own domain.
"""

import http.client
from urllib.parse import urlsplit

from django.test import Client

from automations import services as automation_services
from interfaces.models import WhiteLabelDomain
from interfaces.tests.support import png
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, wait_until

pytestmark = END_TO_END

FORM = {
    "type": "form",
    "title": "Order a shirt",
    "fields": [{"name": "email", "type": "email", "label": "Email", "required": True}],
}


def signed_in(page, web, owner) -> None:
    """The owner's session cookie in the browser: sign-in itself has tests of its own."""
    client = Client()
    client.force_login(owner)
    page.raw.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": web.base}])


def answers(url: str) -> bool:
    """Whether gunicorn serves url on its host (each worker reads the domains again within 5 seconds)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=5)
    try:
        connection.request("GET", parts.path, headers={"Host": parts.netloc})
        return connection.getresponse().status == 200
    finally:
        connection.close()


def logo_shown(page, name: str) -> bool:
    """The image named name is on the page and was loaded (a broken image has no natural width)."""
    logo = page.raw.get_by_role("img", name=name)
    return logo.is_visible() and logo.evaluate("image => image.complete && image.naturalWidth > 0")


def test_an_owner_sets_name_and_logo_and_a_form_on_their_domain_shows_them(web, page, owner, tmp_path):
    domain = f"forms.localhost:{web.port}"
    signed_in(page, web, owner)
    page.open(f"{web.base}/account/", "your-automations")
    page.raw.get_by_role("link", name="Your domain and brand").click()
    page.check("brand-page-empty")

    page.raw.get_by_label("Domain").fill(domain)
    page.raw.get_by_label("Name shown").fill("Acme Tools")
    svg = tmp_path / "logo.png"
    svg.write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    page.raw.get_by_label("New logo").set_input_files(str(svg))
    page.raw.get_by_role("button", name="Save").click()
    page.check("an-svg-refused")
    assert page.raw.get_by_text("This file is not a PNG, JPEG, WebP or GIF image").is_visible()
    assert not WhiteLabelDomain.objects.exists()

    logo = tmp_path / "acme.png"
    logo.write_bytes(png(120, 40, (230, 120, 30)))
    page.raw.get_by_label("New logo").set_input_files(str(logo))
    page.raw.get_by_role("button", name="Save").click()
    page.check("brand-saved")
    assert page.raw.get_by_role("status").inner_text().startswith("Saved.")
    assert logo_shown(page, "Acme Tools")  # the preview, served on the service's host
    assert page.raw.get_by_text("forms.localhost", exact=True).is_visible()  # the DNS record to add
    assert WhiteLabelDomain.objects.get(owner=owner).domain == domain

    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": []}, enabled=True
    )
    url = automation_services.form_url(automation)
    assert url.startswith(f"http://{domain}/form/")
    wait_until(lambda: answers(url), 15, 0.5, "the domain to be served")
    page.open(url, "form-on-the-domain")
    assert logo_shown(page, "Acme Tools")
    assert page.raw.title() == "Order a shirt · Acme Tools"
    assert "Flowgate" not in page.raw.content()


def test_the_brand_page_and_a_branded_form_fit_a_phone(web, phone_page, owner):
    domain = f"forms.localhost:{web.port}"
    content = png(120, 40, (30, 120, 230))
    from interfaces.whitelabel import logos

    WhiteLabelDomain.objects.create(
        owner=owner,
        domain=domain,
        name="A rather long company name that must wrap on a phone",
        logo=content,
        logo_content_type="image/png",
        logo_digest=logos.digest_of(content),
    )
    signed_in(phone_page, web, owner)
    phone_page.open(f"{web.base}/account/brand", "brand-page")
    assert_fits_the_screen(phone_page)
    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": []}, enabled=True
    )
    url = automation_services.form_url(automation)
    wait_until(lambda: answers(url), 15, 0.5, "the domain to be served")
    phone_page.open(url, "form-on-the-domain")
    assert_fits_the_screen(phone_page)
    assert "Flowgate" not in phone_page.raw.content()
