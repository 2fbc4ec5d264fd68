"""The chat widget's page (/webchat/{key}) and its embed script (/webchat/embed.js?key={key})."""

import re

import pytest

from automations import services
from publickeys.models import PublicKey
from publickeys.selectors import key_of

pytestmark = pytest.mark.django_db


def frame_ancestors(response) -> str:
    return re.search(r"frame-ancestors ([^;]+)", response["Content-Security-Policy"]).group(1)


def test_the_page_issues_a_conversation_token_and_shows_the_title_and_welcome(client, make_chat):
    _, key = make_chat(title="Ask Ada", welcome="Hello! How can I help?")
    page = client.get(f"/webchat/{key}")
    body = page.content.decode()
    assert page.status_code == 200
    assert "Ask Ada" in body and "Hello! How can I help?" in body
    token = re.search(r'data-token="([^"]+)"', body).group(1)
    assert len(token) > 40
    assert f'data-messages-url="/webchat/{key}/messages"' in body
    assert page["Cache-Control"] == "no-store"


def test_each_load_is_a_new_conversation(client, make_chat, open_widget):
    _, key = make_chat()
    assert open_widget(key) != open_widget(key)


def test_the_frame_may_be_framed_by_any_page_by_default_and_sends_no_x_frame_options(client, make_chat):
    _, key = make_chat()
    page = client.get(f"/webchat/{key}")
    assert "X-Frame-Options" not in page
    assert frame_ancestors(page) == "https: http:"
    assert "script-src 'self'" in page["Content-Security-Policy"]
    assert "unsafe-inline" not in page["Content-Security-Policy"]


def test_the_allowed_origins_are_the_frame_ancestors(client, make_chat):
    _, key = make_chat(allowed_origins=["https://shop.example", "https://*.example.org"])
    page = client.get(f"/webchat/{key}")
    assert frame_ancestors(page) == "https://shop.example https://*.example.org"
    assert "X-Frame-Options" not in page


def test_the_page_has_no_inline_script_or_style(client, make_chat):
    _, key = make_chat(welcome="<script>alert(1)</script>")
    body = client.get(f"/webchat/{key}").content.decode()
    assert re.findall(r"<script(?![^>]*\bsrc=)", body) == []
    assert " style=" not in body and "<style" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_the_page_is_labelled_for_assistive_technology(client, make_chat):
    _, key = make_chat()
    body = client.get(f"/webchat/{key}").content.decode()
    assert '<label class="chat__label" for="chat-text">' in body and 'id="chat-text"' in body
    assert 'role="log" aria-live="polite"' in body
    assert '<html lang="en' in body


@pytest.mark.parametrize("how", ["unknown", "altered", "shortened", "longer", "of another purpose"])
def test_keys_that_are_not_a_widgets_get_404_alike(client, make_chat, make_automation, how):
    _, key = make_chat()
    webhook_key = key_of(purpose=PublicKey.Purpose.WEBHOOK, target=make_automation())
    wrong = {
        "unknown": "A" * 32,
        "altered": key[:-1] + ("a" if key[-1] != "a" else "b"),
        "shortened": key[:-1],
        "longer": key + "a",
        "of another purpose": webhook_key,
    }[how]
    miss = client.get(f"/webchat/{wrong}")
    assert miss.status_code == 404
    assert miss.content == client.get("/webchat/" + "B" * 32).content
    assert client.get(f"/webchat/embed.js?key={wrong}").status_code == 404
    assert client.get(f"/webchat/{wrong}/messages", headers={"X-Chat-Token": "x"}).status_code == 404


def test_a_deleted_automations_widget_answers_404(client, make_chat):
    automation, key = make_chat()
    services.delete_automation(automation=automation)
    assert client.get(f"/webchat/{key}").status_code == 404
    assert client.get(f"/webchat/embed.js?key={key}").status_code == 404


def test_a_widget_whose_trigger_became_another_type_answers_404(client, make_chat):
    automation, key = make_chat()
    services.update_automation(automation=automation, definition={"trigger": {"type": "webhook"}, "steps": []})
    assert client.get(f"/webchat/{key}").status_code == 404
    assert services.hook_url(automation)  # the new type's URL was issued


def test_a_widget_that_is_off_says_the_chat_is_not_available(client, make_chat):
    _, key = make_chat(enabled=False, title="Ask Ada")
    page = client.get(f"/webchat/{key}")
    assert page.status_code == 503
    assert "not available" in page.content.decode() and "data-token" not in page.content.decode()
    assert 'class="chat__notice"' in page.content.decode()  # a notice in the chat's look, not a bare line
    assert "X-Frame-Options" not in page  # shown inside the frame on the site's page


def test_an_unknown_widget_says_so_in_the_chats_own_words_and_styled_as_the_paused_notice(client):
    miss = client.get("/webchat/" + "B" * 32)
    body = miss.content.decode()
    assert miss.status_code == 404
    assert "This chat is not available" in body and "form" not in body.lower()
    assert 'class="chat__notice"' in body and "chat.css" in body


def test_a_paused_widgets_embed_button_says_the_chat_is_unavailable_and_is_not_kept_long(client, make_chat):
    automation, key = make_chat(enabled=False)
    paused = client.get(f"/webchat/embed.js?key={key}")
    assert paused.status_code == 200 and paused["Cache-Control"] == "no-cache"
    assert '"Chat unavailable"' in paused.content.decode() and "var available = false;" in paused.content.decode()
    services.turn_on(automation=automation)
    on = client.get(f"/webchat/embed.js?key={key}")
    assert on["Cache-Control"] == "public, max-age=300"
    assert "Chat unavailable" not in on.content.decode() and "var available = true;" in on.content.decode()


def test_only_get_and_head_open_the_page(client, make_chat):
    _, key = make_chat()
    assert client.head(f"/webchat/{key}").status_code == 200
    assert client.post(f"/webchat/{key}").status_code == 405


def test_the_embed_script_is_javascript_that_frames_the_widget(client, make_chat):
    _, key = make_chat(title='Ask "Ada"</script>')
    script = client.get(f"/webchat/embed.js?key={key}")
    body = script.content.decode()
    assert script.status_code == 200
    assert script["Content-Type"] == "text/javascript; charset=utf-8"
    assert script["X-Content-Type-Options"] == "nosniff"
    assert 'document.createElement("iframe")' in body and "attachShadow" in body
    assert "Ask \\u0022Ada\\u0022\\u003C/script\\u003E" in body  # the title cannot end the string or the script
    assert "Content-Security-Policy" not in script


def test_the_embed_script_without_a_key_answers_404(client):
    assert client.get("/webchat/embed.js").status_code == 404


def test_the_owner_sees_the_widget_url(make_chat, settings):
    automation, key = make_chat()
    assert services.chat_widget_url(automation) == f"{settings.BASE_URL}/webchat/{key}"
    assert services.hook_url(automation) is None and services.web_service_url(automation) is None


def test_import_prints_and_admin_shows_the_chat_widget_url(tmp_path, owner, staff_client, settings):
    import io
    import json

    from django.core.management import call_command

    from automations.models import Automation

    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"name": "Helpdesk", "trigger": {"type": "chat"}, "steps": []}))
    out = io.StringIO()
    call_command("import_automation", str(path), "--owner", owner.username, stdout=out)
    automation = Automation.objects.get(name="Helpdesk")
    url = services.chat_widget_url(automation)
    assert f"chat widget URL: {url}" in out.getvalue() and "webhook URL" not in out.getvalue()
    page = staff_client.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert url in page


def test_the_widget_speaks_the_visitors_language(client, make_chat):
    _, key = make_chat()
    page = client.get(f"/webchat/{key}", headers={"Accept-Language": "de"}).content.decode()
    assert '<html lang="de"' in page and "Ihre Nachricht" in page and "Senden" in page
    script = client.get(f"/webchat/embed.js?key={key}", headers={"Accept-Language": "de"})
    assert "Chat schließen" in script.content.decode()
    assert "Accept-Language" in script["Vary"]  # a shared cache keeps one script per language


def test_page_loads_past_the_per_ip_limit_get_429_with_retry_after_and_no_token(client, make_chat, settings):
    settings.CHAT_RATE_PAGE_IP = "2/m"
    _, key = make_chat(allowed_origins=["https://shop.example"])
    assert client.get(f"/webchat/{key}").status_code == 200
    assert client.get(f"/webchat/{key}").status_code == 200
    refused = client.get(f"/webchat/{key}")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert b"data-token" not in refused.content and b"Too many requests" in refused.content
    assert refused["Cache-Control"] == "no-store"
    assert frame_ancestors(refused) == "https://shop.example"  # the message shows in the site's frame


def test_the_page_limit_counts_every_widget_and_miss_of_one_address_and_spares_others(client, make_chat, settings):
    settings.CHAT_RATE_PAGE_IP = "2/m"
    _, first = make_chat()
    _, second = make_chat()
    assert client.get("/webchat/" + "A" * 32).status_code == 404
    assert client.get(f"/webchat/{first}").status_code == 200
    assert client.get(f"/webchat/{second}").status_code == 429
    assert client.get("/webchat/" + "A" * 32).status_code == 429  # a miss past the limit looks like a hit
    assert client.get(f"/webchat/{second}", REMOTE_ADDR="203.0.113.9").status_code == 200


def test_the_page_limit_lets_pages_through_when_its_counter_is_unreachable(client, make_chat, settings):
    settings.CHAT_RATE_PAGE_IP = "1/m"
    settings.CACHES = {  # the counters' cache refuses connections: nothing listens on port 9 here
        **settings.CACHES,
        "down": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"},
    }
    settings.RATELIMIT_USE_CACHE = "down"
    _, key = make_chat()
    assert [client.get(f"/webchat/{key}").status_code for _ in range(3)] == [200, 200, 200]


@pytest.mark.parametrize(
    ("allowed", "named"),
    [(None, "*"), (["https://shop.example", "https://*.example.org"], "https://shop.example https://*.example.org")],
)
def test_the_page_names_the_sites_its_frame_may_trade_its_token_with(client, make_chat, allowed, named):
    _, key = make_chat(**({"allowed_origins": allowed} if allowed else {}))
    body = client.get(f"/webchat/{key}").content.decode()
    assert f'data-frame-origins="{named}"' in body  # static/chat.js: the same sites as its frame-ancestors
