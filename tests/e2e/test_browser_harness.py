"""The browser harness fails a page on what it promises to catch: accessibility violations and CSP violations."""

import pytest

pytestmark = pytest.mark.e2e

POLICY = "default-src 'self'; script-src 'self'; style-src 'self'"


def _serve(page, html: str) -> None:
    """Answer every request of the page with html and the pages' policy, as the service would."""
    page.raw.route(
        "**/*",
        lambda route: route.fulfill(
            status=200, body=html, headers={"Content-Type": "text/html", "Content-Security-Policy": POLICY}
        ),
    )


def test_a_page_with_an_unlabelled_input_and_no_language_fails_the_check(page):
    _serve(page, "<!doctype html><title>x</title><main><input type='text'><img src='a.png'></main>")
    with pytest.raises(AssertionError, match=r"accessibility \((serious|critical)\)"):
        page.open("http://127.0.0.1:9/unlabelled")


def test_a_page_whose_inline_script_the_policy_refuses_fails_the_check(page):
    _serve(page, "<!doctype html><html lang='en'><title>x</title><main><h1>x</h1><script>1</script></main></html>")
    with pytest.raises(AssertionError, match="CSP violation"):
        page.open("http://127.0.0.1:9/inline-script")


def test_a_clean_page_passes_and_leaves_a_screenshot(page):
    _serve(page, "<!doctype html><html lang='en'><title>x</title><main><h1>Fine</h1></main></html>")
    page.open("http://127.0.0.1:9/fine", "fine")
    assert (page.folder / "01-fine.png").is_file()
