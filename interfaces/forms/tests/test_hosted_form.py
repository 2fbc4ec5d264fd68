"""The hosted form /form/{key}: misses, off, sign-in, spam, limits, validation, uploads, and the run it starts."""

import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from automations import services as automation_services
from automations.models import Run
from interfaces.forms import spam
from interfaces.models import FormFile
from interfaces.tests.support import form_path, shown_token

pytestmark = pytest.mark.django_db

GOOD = {"email": "ada@example.com", "topic": "sales"}


def submit(client, path, data, **extra):
    return client.post(path, {spam.SHOWN: shown_token(client, path), **data}, **extra)


def test_an_unknown_or_altered_key_shows_the_unavailable_page(client, make_form):
    path = form_path(make_form())
    for wrong in ("/form/nothing", path[:-1] + ("A" if path[-1] != "A" else "B"), path + "x"):
        response = client.get(wrong)
        assert response.status_code == 404 and b"This form is not available" in response.content


def test_the_key_of_another_purpose_is_not_a_form(client, make_automation):
    automation = make_automation()
    key = automation_services.hook_url(automation).rsplit("-", 1)[1]
    assert client.get(f"/form/{key}").status_code == 404


def test_a_form_whose_automation_is_off_is_not_accepting_answers(client, make_form):
    path = form_path(make_form(enabled=False))
    for response in (client.get(path), client.post(path, GOOD)):
        assert response.status_code == 503 and b"not accepting answers" in response.content
    assert not Run.objects.exists()


def test_a_form_that_requires_sign_in_sends_signed_out_visitors_to_login_and_back(client, make_form, owner):
    path = form_path(make_form(require_sign_in=True))
    response = client.get(path + "?ref=x")
    assert response.status_code == 302 and response["Location"] == f"/login?next={path}%3Fref%3Dx"
    client.force_login(owner)
    assert client.get(path).status_code == 200


def test_the_page_shows_the_fields_prefilled_from_the_query_string(client, make_form):
    path = form_path(make_form(title="Contact us", description="We answer within a day."))
    page = client.get(path + "?email=a@b.example&ref=newsletter").content.decode()
    assert '<h1 dir="auto">Contact us</h1>' in page and "We answer within a day." in page
    assert 'value="a@b.example"' in page and 'type="hidden" name="ref" value="newsletter"' in page
    assert 'name="fg-website"' in page and 'name="fg-shown"' in page and "csrfmiddlewaretoken" in page


@pytest.mark.parametrize("broken", ["%FF%FE", "%ED%A0%80", "%C0%AE", "a%00b"])
def test_a_prefill_of_broken_unicode_or_nul_is_ignored_and_good_values_beside_it_kept(client, make_form, broken):
    path = form_path(make_form())
    page = client.get(f"{path}?email={broken}&ref=caf%C3%A9+%E2%9C%93").content.decode()
    [email] = re.findall(r'<input[^>]*name="email"[^>]*>', page)
    assert "value=" not in email and "\ufffd" not in page
    assert 'type="hidden" name="ref" value="café ✓"' in page


def test_a_submission_with_errors_shows_each_message_beside_its_field_and_keeps_every_value(client, make_form):
    path = form_path(make_form())
    response = submit(client, path, {"email": "nope", "topic": "support", "ref": "ad"})
    page = response.content.decode()
    assert response.status_code == 400
    assert page.count('class="field__error" id=') == 2  # email invalid, order required now that topic is support
    assert 'value="nope"' in page and 'value="support" selected' in page and 'value="ad"' in page
    assert not Run.objects.exists()


def test_a_field_fixed_when_the_form_is_sent_again_loses_its_error_and_the_other_keeps_its_own(client, make_form):
    path = form_path(make_form())
    first = submit(client, path, {"email": "nope", "topic": "support"}).content.decode()
    shown = re.search(r'name="fg-shown" value="([^"]+)"', first).group(1)
    again = client.post(path, {spam.SHOWN: shown, "email": "ada@example.com", "topic": "support"})
    page = again.content.decode()
    assert again.status_code == 400 and page.count('class="field__error" id=') == 1
    assert 'id="id_order_error"' in page and 'id="id_email_error"' not in page
    email_input = re.search(r"<input[^>]*name=\"email\"[^>]*>", page).group(0)
    assert "aria-invalid" not in email_input and "id_email_error" not in email_input


def test_a_valid_submission_queues_a_run_and_sends_the_visitor_to_its_session_page(client, make_form, owner):
    automation = make_form()
    path = form_path(automation)
    response = submit(client, path, {**GOOD, "order": "ignored: hidden", "ref": "ad"})
    assert response.status_code == 303
    assert response["Location"].startswith("run/") and len(response["Location"]) > 30  # relative: works behind a proxy
    run = Run.objects.get()
    assert run.source == "form" and run.status == "waiting" and run.steps == []
    assert run.trigger["body"] == {"email": "ada@example.com", "topic": "sales", "ref": "ad"}
    assert run.trigger["form"]["user"] is None
    assert client.get(path.rsplit("/", 1)[0] + "/" + response["Location"]).status_code == 200


def test_a_valid_submission_runs_its_steps_in_a_worker(
    client, make_form, eager_tasks, django_capture_on_commit_callbacks
):
    automation = make_form([{"id": "note", "kind": "set_values", "values": {"who": "{{trigger.body.email}}"}}])
    with django_capture_on_commit_callbacks(execute=True):
        submit(client, form_path(automation), GOOD)
    run = Run.objects.get()
    assert run.status == "succeeded" and run.steps[0]["output"] == {"who": "ada@example.com"}


def test_a_honeypot_hit_starts_no_run(client, make_form):
    response = submit(client, form_path(make_form()), {**GOOD, spam.HONEYPOT: "http://spam.example"})
    assert response.status_code == 400 and not Run.objects.exists()


@override_settings(FORM_MIN_FILL_SECONDS=30)
def test_a_form_sent_back_too_fast_or_without_its_shown_time_starts_no_run_and_keeps_the_values(client, make_form):
    path = form_path(make_form())
    for data in ({spam.SHOWN: shown_token(client, path), **GOOD}, GOOD, {spam.SHOWN: "forged", **GOOD}):
        response = client.post(path, data)
        assert response.status_code == 400 and b"That was quick" in response.content
        assert b'value="ada@example.com"' in response.content
    assert not Run.objects.exists()


@override_settings(FORM_MIN_FILL_SECONDS=30)
def test_a_quick_form_with_the_pages_script_proof_starts_its_run(client, make_form, monkeypatch):
    """Autofill sends a one-field form within a second: the script's proof, not the clock, tells a person."""
    path = form_path(make_form())
    token = shown_token(client, path)
    proven = {spam.SHOWN: token, spam.PROOF: spam.script_proof(token), **GOOD}
    assert client.post(path, proven).status_code == 400  # sooner than any person: the floor holds
    later = time.time() + 0.5
    monkeypatch.setattr(time, "time", lambda: later)
    response = client.post(path, proven)
    assert response.status_code == 303 and Run.objects.count() == 1


@override_settings(FORM_MIN_FILL_SECONDS=30)
def test_a_proof_of_another_shown_time_or_without_one_counts_for_nothing(client, make_form):
    path = form_path(make_form())
    token, other = shown_token(client, path), shown_token(client, path)
    for proof in (spam.script_proof(other), token, ""):
        assert client.post(path, {spam.SHOWN: token, spam.PROOF: proof, **GOOD}).status_code == 400
    forged = "forged"
    assert client.post(path, {spam.SHOWN: forged, spam.PROOF: spam.script_proof(forged), **GOOD}).status_code == 400
    assert not Run.objects.exists()


def test_a_form_shown_again_after_a_mistake_keeps_its_first_shown_time(client, make_form, monkeypatch):
    path = form_path(make_form())
    with override_settings(FORM_MIN_FILL_SECONDS=30):
        token = shown_token(client, path)
        later = time.time() + 31
        monkeypatch.setattr(time, "time", lambda: later)
        again = client.post(path, {spam.SHOWN: token, **GOOD, "email": "not an address"})
        assert again.status_code == 400
        assert f'value="{token}"'.encode() in again.content  # the clock did not start again
        assert client.post(path, {spam.SHOWN: token, **GOOD}).status_code == 303


def test_a_shown_time_of_another_form_does_not_count(client, make_form):
    first, second = form_path(make_form()), form_path(make_form())
    response = client.post(second, {spam.SHOWN: shown_token(client, first), **GOOD})
    assert response.status_code == 400 and not Run.objects.exists()


def test_a_shown_time_long_enough_ago_passes(client, make_form, monkeypatch):
    path = form_path(make_form())
    with override_settings(FORM_MIN_FILL_SECONDS=30):
        token = shown_token(client, path)
        later = time.time() + 31
        monkeypatch.setattr(time, "time", lambda: later)
        assert client.post(path, {spam.SHOWN: token, **GOOD}).status_code == 303


@override_settings(FORM_RATE_IP="2/m")
def test_submissions_past_the_per_ip_limit_get_the_429_page(client, make_form):
    path = form_path(make_form())
    assert [client.post(path, GOOD).status_code for _ in range(3)] == [400, 400, 429]
    response = client.post(path, GOOD)
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert b"Too many submissions" in response.content


def test_a_form_s_own_limit_counts_every_visitor(client, make_form):
    path = form_path(make_form(limits={"per_form": "2/h"}))
    codes = [client.post(path, GOOD, REMOTE_ADDR=f"10.0.0.{n}").status_code for n in range(3)]
    assert codes == [400, 400, 429]


FILE_FIELDS = [
    {"name": "cv", "type": "file", "max_files": 2, "max_bytes": 1000, "accept": [".pdf", "image/*"]},
    {"name": "note", "type": "text", "required": True},
]


@pytest.fixture
def file_form(make_form):
    return make_form(fields=FILE_FIELDS)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([("big.pdf", b"x" * 1001, "application/pdf")], b"Each file may be at most"),
        ([("a.exe", b"MZ", "application/octet-stream")], b"This type of file is not accepted here."),
        ([("a.pdf", b"1", "application/pdf")] * 3, b"Send at most 2 files."),
        ([("x" * 252 + ".pdf", b"1", "application/pdf")], b"may be at most 255 characters long"),
    ],
    ids=["too-large", "wrong-type", "too-many", "name-too-long"],
)
def test_an_upload_over_each_limit_is_refused_beside_its_field_and_keeps_the_other_values(
    client, file_form, files, message
):
    path = form_path(file_form)
    uploads = [SimpleUploadedFile(name, content, content_type=kind) for name, content, kind in files]
    for upload, (name, _, _) in zip(uploads, files, strict=True):
        upload._name = name  # as sent: Django's own file object would cut a name past 255 characters
    response = submit(client, path, {"cv": uploads, "note": "kept value"})
    assert response.status_code == 400 and message in response.content
    assert b'value="kept value"' in response.content
    assert not Run.objects.exists() and not FormFile.objects.exists()


def test_a_body_past_every_file_s_limit_together_stops_being_read(client, file_form):
    from interfaces.forms.uploads import LimitedUploadHandler

    handler = LimitedUploadHandler(None, {"cv": {"max_files": 2, "max_bytes": 1000, "accept": []}})
    handler.new_file("cv", "a.pdf", "application/pdf", None)
    handler.receive_data_chunk(b"x" * 900, 0)
    handler.new_file("cv", "b.pdf", "application/pdf", None)
    from django.core.files.uploadhandler import StopUpload

    with pytest.raises(StopUpload) as stopped:
        handler.receive_data_chunk(b"x" * 1101, 0)
    assert stopped.value.connection_reset


def test_accepted_files_are_kept_and_given_to_steps_with_a_link_only_the_owner_opens(
    client, file_form, owner, another_account
):
    path = form_path(file_form)
    uploads = [
        SimpleUploadedFile("cv.pdf", b"%PDF-1", "application/pdf"),
        SimpleUploadedFile("me.png", b"P", "image/png"),
    ]
    assert submit(client, path, {"cv": uploads, "note": "hi"}).status_code == 303
    sent = Run.objects.get().trigger["body"]["cv"]
    assert [(f["name"], f["size"], f["type"]) for f in sent] == [
        ("cv.pdf", 6, "application/pdf"),
        ("me.png", 1, "image/png"),
    ]
    link = sent[0]["url"].split("://", 1)[1].split("/", 1)[1]
    assert client.get("/" + link).status_code == 302  # signed out: to sign-in
    client.force_login(another_account)
    assert client.get("/" + link).status_code == 404
    client.force_login(owner)
    response = client.get("/" + link)
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"%PDF-1"
    assert 'attachment; filename="cv.pdf"' in response["Content-Disposition"]


def test_a_post_without_its_csrf_token_is_refused(make_form):
    from django.test import Client

    path = form_path(make_form())
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(path, GOOD).status_code == 403
    assert not Run.objects.exists()


def test_a_file_name_that_is_no_file_name_is_kept_safely(client, file_form):
    upload = SimpleUploadedFile("../../etc/passwd.pdf", b"x", "application/pdf")
    assert submit(client, form_path(file_form), {"cv": [upload], "note": "n"}).status_code == 303
    kept = FormFile.objects.get()
    assert ".." not in kept.path and kept.path.startswith("forms/")
    assert kept.name == "passwd.pdf"  # the name as Django parsed it, shown to steps; the path in storage is ours


@pytest.mark.parametrize(
    "name",
    ["x" * 251 + ".pdf", "a.pdf" + "\u00e9" * 200, "a." + "p" * 250],
    ids=["longest name", "extension longer in bytes than a file system allows", "long extension"],
)
def test_a_file_name_as_long_as_allowed_is_kept_whole_whatever_its_extension(client, make_form, name):
    automation = make_form(fields=[{"name": "cv", "type": "file"}, {"name": "note", "type": "text"}])
    upload = SimpleUploadedFile(name, b"%PDF", "application/pdf")
    assert submit(client, form_path(automation), {"cv": [upload], "note": "n"}).status_code == 303
    assert FormFile.objects.get().name == name


def test_an_edited_form_shows_its_new_fields_at_once_in_the_process_that_saved_it(
    client, make_form, django_capture_on_commit_callbacks
):
    automation = make_form()
    path = form_path(automation)
    assert b'name="topic"' in client.get(path).content
    definition = {**automation.definition}
    definition["trigger"] = {**definition["trigger"], "fields": [{"name": "phone", "type": "text"}]}
    with django_capture_on_commit_callbacks(execute=True):
        automation_services.update_automation(automation=automation, definition=definition)
    page = client.get(path).content
    assert b'name="phone"' in page and b'name="topic"' not in page


def test_the_blank_form_remembered_carries_no_visitor_s_values(client, make_form):
    path = form_path(make_form())
    client.get(path + "?email=first@example.com")
    first, second = client.get(path), client.get(path)
    assert b"first@example.com" not in first.content
    assert first.content.count(b'name="email"') == second.content.count(b'name="email"') == 1


def test_behind_a_proxy_that_ends_tls_the_csrf_check_passes_and_the_visitor_goes_on(make_form, settings):
    """TRUSTED_PROXY_COUNT set: the proxy's X-Forwarded-Proto makes the request https, so a browser's https Origin
    passes the CSRF check; the same Origin on a request the proxy did not vouch for is refused."""
    from django.test import Client

    settings.TRUSTED_PROXY_COUNT = 1
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    path = form_path(make_form())
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(path, HTTP_X_FORWARDED_PROTO="https").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = {
        spam.SHOWN: shown_token(browser, path, HTTP_X_FORWARDED_PROTO="https"),
        "csrfmiddlewaretoken": token,
        **GOOD,
    }
    origin = {"HTTP_ORIGIN": "https://testserver", "HTTP_HOST": "testserver"}  # the proxy passes the Host on
    assert browser.post(path, data, **origin).status_code == 403  # plain http with an https Origin: refused
    response = browser.post(path, data, HTTP_X_FORWARDED_PROTO="https", **origin)
    assert response.status_code == 303 and response["Location"].startswith("run/")
    assert Run.objects.count() == 1


def test_deleting_the_automation_removes_its_files_from_the_storage_and_leaves_others(
    client, file_form, make_form, django_capture_on_commit_callbacks
):
    from django.core.files.storage import default_storage

    other = make_form(fields=FILE_FIELDS)
    for automation in (file_form, other):
        upload = SimpleUploadedFile("cv.pdf", b"%PDF-1", "application/pdf")
        assert submit(client, form_path(automation), {"cv": [upload], "note": "n"}).status_code == 303
    gone, kept = (FormFile.objects.get(automation=a).path for a in (file_form, other))
    assert default_storage.exists(gone) and default_storage.exists(kept)
    with django_capture_on_commit_callbacks(execute=True):
        automation_services.delete_automation(automation=file_form)
    assert not default_storage.exists(gone) and not default_storage.exists(f"forms/{file_form.pk}")
    assert default_storage.exists(kept)


class _Unread:
    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


@pytest.mark.parametrize("fields", ["files", "none"])
def test_a_body_larger_than_the_form_may_hold_is_refused_before_it_is_read(client, make_form, file_form, fields):
    """A refused file part would be read to its end whatever its size: the declared length decides first."""
    from django.conf import settings

    automation = file_form if fields == "files" else make_form()
    path = form_path(automation)
    handler_cap = 2 * 1000 if fields == "files" else 0  # FILE_FIELDS: 2 files of 1,000 bytes at most
    too_long = handler_cap + settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 64 * 1024 + 1
    never_read = {"wsgi.input": _Unread()}
    refused = client.generic(
        "POST", path, b"", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH=str(too_long), **never_read
    )
    assert refused.status_code == 413 and b"Too much was sent" in refused.content
    undeclared = client.generic("POST", path, b"", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH="")
    assert undeclared.status_code == 411
    assert not Run.objects.exists()
    assert submit(client, path, {**GOOD, "note": "n"}).status_code == 303  # an ordinary submission still goes
