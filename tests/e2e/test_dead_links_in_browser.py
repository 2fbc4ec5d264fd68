"""Links that lead nowhere, in Chromium at a phone's width: one design, each kind in its own words, accessible."""

from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END

pytestmark = END_TO_END
NEVER_ISSUED = "A" * 32
DEAD_LINKS = {
    "hosted-form": (f"/form/{NEVER_ISSUED}", "This form is not available"),
    "one-time-form": (f"/form/s/{NEVER_ISSUED}", "This form is not available"),
    "form-session": (f"/form/run/{NEVER_ISSUED}", "This page is not available"),
    "approval-link": (f"/moderation?queue={NEVER_ISSUED}", "This approval link is not available"),
    "chat": (f"/webchat/{NEVER_ISSUED}", "This chat is not available"),
    "any-page": ("/no/such/page", "Page not found"),
}


def test_each_kind_of_dead_link_reads_in_its_own_words_on_a_phone(web, phone_page):
    for label, (path, heading) in DEAD_LINKS.items():
        response = phone_page.open(web.base + path, label)  # a screenshot and the accessibility check of each
        assert response.status == 404, label
        assert phone_page.raw.get_by_role("heading", name=heading, exact=True).is_visible(), label
        assert_fits_the_screen(phone_page)
