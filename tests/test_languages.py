"""Pages speak English, or German to a browser that prefers it (Accept-Language), from the committed .mo file."""

import pytest

pytestmark = pytest.mark.django_db


def test_a_german_browser_gets_german_pages(client):
    response = client.get("/login", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")
    html = response.content.decode()
    assert '<html lang="de">' in html
    assert "Zum Inhalt springen" in html
    assert "Anmelden" in html
    assert response["Content-Language"] == "de"
    assert "Accept-Language" in response["Vary"]


def test_other_browsers_get_english(client):
    for accept in ("en-US,en;q=0.9", "fr-FR", ""):
        html = client.get("/login", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
        assert '<html lang="en">' in html, accept
        assert "Skip to content" in html, accept


def test_json_answers_do_not_vary_by_language(client, three_apps):
    response = client.get("/catalog/v1/apps", HTTP_ACCEPT_LANGUAGE="de")
    assert "Accept-Language" not in response.get("Vary", "")
    assert "Content-Language" not in response


def test_the_compiled_translations_are_committed_beside_their_source():
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "locale" / "de" / "LC_MESSAGES"
    assert (folder / "django.mo").stat().st_mtime >= (folder / "django.po").stat().st_mtime - 1


def test_the_home_and_sign_up_pages_are_german_too(client, make_catalog):
    html = client.get("/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Der Katalog-Feed" in html
    html = client.get("/signup", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Ein Konto bekommen" in html


def test_the_account_pages_are_german_too(client, settings):
    settings.SIGNUP_OPEN = True
    for path, text in [
        ("/signup", "Konto erstellen"),
        ("/signup/sent", "Sehen Sie in Ihr Postfach"),
        ("/signup/resend", "Link erneut senden"),
        ("/signup/confirm/x", "Dieser Link funktioniert nicht"),
        ("/login", "Passwort vergessen?"),
        ("/password-reset", "Passwort zurücksetzen"),
        ("/", "Die öffentlichen URLs, die es bereitstellt"),
    ]:
        assert text in client.get(path, HTTP_ACCEPT_LANGUAGE="de").content.decode(), path


def test_every_text_in_the_translations_has_its_german_and_none_is_fuzzy():
    """makemessages marks a changed text fuzzy and adds new ones empty: each must be translated before it ships."""
    import re

    from django.conf import settings

    text = (settings.BASE_DIR / "locale" / "de" / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    entries = [entry for entry in text.split("\n\n")[1:] if not entry.lstrip().startswith("#~")]
    fuzzy = [entry for entry in entries if re.search(r"^#,.*\bfuzzy\b", entry, re.M)]
    empty = [entry for entry in entries if re.search(r'^msgstr(\[\d\])? ""$(?!\n")', entry, re.M)]
    assert not fuzzy and not empty, (fuzzy + empty)[:3]
