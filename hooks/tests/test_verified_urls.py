"""Verified webhook URLs through the hooks process's driver: each scheme with good, bad, stale, replayed and rotated
signatures, the allow list, the handshakes, and what a refusal leaves behind."""

import json
import time
from urllib.parse import urlsplit

import pytest

from automations import selectors as automation_selectors
from automations import services as automation_services
from automations.models import Run
from hooks import signatures, verification
from hooks.models import Delivery, Refusal, Verification

# Rows are stored as in production: by the writer thread, on a connection of its own.
pytestmark = pytest.mark.django_db(transaction=True)

STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
OTHER_STANDARD_SECRET = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
GITHUB_SECRET = "It's a Secret to Everybody"
STRIPE_SECRET = "whsec_test_stripe_endpoint_secret_0123"
BODY = b'{"type": "invoice.paid", "n": 1}'


@pytest.fixture
def client(hooks_client):
    return hooks_client


@pytest.fixture
def automation(make_automation):
    return make_automation([{"id": "keep", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}])


def path_of(automation) -> str:
    return urlsplit(automation_services.hook_url(automation)).path


def verify_with(automation, scheme, secret="", *, networks=(), tolerance=300, keep_previous=True):
    verification.save(
        automation_id=automation.pk,
        scheme=scheme,
        tolerance_seconds=tolerance,
        new_secret=secret,
        keep_previous=keep_previous,
        allowed_networks=list(networks),
    )


def standard_headers(secret, *, webhook_id="msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at=None, body=BODY):
    at = int(time.time()) if at is None else at
    return {
        "HTTP_WEBHOOK_ID": webhook_id,
        "HTTP_WEBHOOK_TIMESTAMP": str(at),
        "HTTP_WEBHOOK_SIGNATURE": signatures.sign_standard(secret, webhook_id, at, body),
    }


def post(client, automation, headers, body=BODY, **extra):
    return client.post(path_of(automation), data=body, content_type="application/json", **headers, **extra)


def refused(reason):
    return list(Refusal.objects.values_list("reason", flat=True)) == [reason] and not Delivery.objects.exists()


def test_a_url_without_verification_takes_any_request(client, automation):
    assert post(client, automation, {}).status_code == 200
    assert Delivery.objects.get().replay_id is None


# Standard Webhooks


def test_a_standard_webhooks_signature_that_matches_is_accepted(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    response = post(client, automation, standard_headers(STANDARD_SECRET))
    assert response.status_code == 200
    delivery = Delivery.objects.get()
    assert response["X-Flowgate-Delivery-Id"] == str(delivery.public_id)
    assert bytes(delivery.body) == BODY and delivery.replay_id


def test_a_standard_webhooks_signature_under_another_secret_gets_401_and_is_recorded_not_run(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    response = post(client, automation, standard_headers(OTHER_STANDARD_SECRET))
    assert (response.status_code, response.content) == (401, b"signature did not match\n")
    assert refused(Refusal.Reason.SIGNATURE)
    assert not Run.objects.exists()
    refusal = Refusal.objects.get()
    assert (refusal.method, refusal.path, refusal.body_size) == ("POST", "/automation-{key}", len(BODY))
    assert Verification.objects.get().refused_count == 1


def test_a_body_changed_after_signing_gets_401(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    response = post(client, automation, standard_headers(STANDARD_SECRET), body=BODY.replace(b"1", b"2"))
    assert response.status_code == 401
    assert refused(Refusal.Reason.SIGNATURE)


# Five minutes and a second either way; the future one has 30 s more, which a slow request would eat into.
@pytest.mark.parametrize("offset", [-301, 331], ids=["stale", "from the future"])
def test_a_standard_webhooks_timestamp_outside_the_tolerance_gets_401(client, automation, offset):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    response = post(client, automation, standard_headers(STANDARD_SECRET, at=int(time.time()) + offset))
    assert (response.status_code, response.content) == (401, b"timestamp outside tolerance\n")
    assert refused(Refusal.Reason.TIMESTAMP)


def test_the_tolerance_is_the_owners(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET, tolerance=3600)
    assert post(client, automation, standard_headers(STANDARD_SECRET, at=int(time.time()) - 1800)).status_code == 200


def test_a_replayed_webhook_id_gets_401_and_only_the_first_is_stored(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    headers = standard_headers(STANDARD_SECRET)
    assert post(client, automation, headers).status_code == 200
    response = post(client, automation, headers)
    assert (response.status_code, response.content) == (401, b"webhook-id already seen\n")
    assert Delivery.objects.count() == 1
    assert list(Refusal.objects.values_list("reason", flat=True)) == [Refusal.Reason.REPLAYED]
    # Re-signed with a new time, as a sender's retry is: the id is still the one already accepted.
    later = standard_headers(STANDARD_SECRET, at=int(time.time()) + 1)
    assert post(client, automation, later).status_code == 401
    assert Delivery.objects.count() == 1


def test_the_same_webhook_id_at_another_url_is_its_own(client, automation, make_automation):
    other = make_automation([], name="other")
    for each in (automation, other):
        verify_with(each, signatures.STANDARD, STANDARD_SECRET)
    headers = standard_headers(STANDARD_SECRET)
    assert [post(client, each, headers).status_code for each in (automation, other)] == [200, 200]


def test_during_a_rotation_the_previous_secret_still_works_until_it_is_forgotten(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    verify_with(automation, signatures.STANDARD, OTHER_STANDARD_SECRET)  # rotated: the first is now the previous
    assert post(client, automation, standard_headers(STANDARD_SECRET, webhook_id="msg_a")).status_code == 200
    assert post(client, automation, standard_headers(OTHER_STANDARD_SECRET, webhook_id="msg_b")).status_code == 200
    verification.save(
        automation_id=automation.pk,
        scheme=signatures.STANDARD,
        tolerance_seconds=300,
        forget_previous=True,
        allowed_networks=[],
    )
    assert post(client, automation, standard_headers(STANDARD_SECRET, webhook_id="msg_c")).status_code == 401
    assert post(client, automation, standard_headers(OTHER_STANDARD_SECRET, webhook_id="msg_d")).status_code == 200


def test_a_sender_that_signs_with_both_secrets_during_its_rotation_is_accepted(client, automation):
    verify_with(automation, signatures.STANDARD, OTHER_STANDARD_SECRET)
    at = int(time.time())
    both = " ".join(signatures.sign_standard(s, "msg_x", at, BODY) for s in (STANDARD_SECRET, OTHER_STANDARD_SECRET))
    headers = {"HTTP_WEBHOOK_ID": "msg_x", "HTTP_WEBHOOK_TIMESTAMP": str(at), "HTTP_WEBHOOK_SIGNATURE": both}
    assert post(client, automation, headers).status_code == 200


@pytest.mark.parametrize("missing", ["HTTP_WEBHOOK_ID", "HTTP_WEBHOOK_TIMESTAMP", "HTTP_WEBHOOK_SIGNATURE"])
def test_a_request_without_the_schemes_headers_gets_401(client, automation, missing):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    headers = standard_headers(STANDARD_SECRET)
    del headers[missing]
    response = post(client, automation, headers)
    assert (response.status_code, response.content) == (401, b"signature headers missing or malformed\n")
    assert refused(Refusal.Reason.MALFORMED)


def test_any_bytes_of_a_body_are_verified_as_received(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    body = bytes(range(256)) * 3 + b"\xff\xfe\x00"
    headers = standard_headers(STANDARD_SECRET, body=body)
    response = client.post(path_of(automation), data=body, content_type="application/octet-stream", **headers)
    assert response.status_code == 200
    assert bytes(Delivery.objects.get().body) == body


# GitHub


def test_a_github_signature_that_matches_is_accepted(client, automation):
    verify_with(automation, signatures.GITHUB, GITHUB_SECRET)
    headers = {"HTTP_X_HUB_SIGNATURE_256": signatures.sign_github(GITHUB_SECRET, BODY)}
    assert post(client, automation, headers).status_code == 200
    assert Delivery.objects.get().replay_id is None


def test_githubs_own_example_verifies():
    """The example of GitHub's documentation, "Validating webhook deliveries"."""
    check = signatures.Check(scheme=signatures.GITHUB, keys=(GITHUB_SECRET.encode(),))
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signatures.verify(check, {"x-hub-signature-256": header}, b"Hello, World!", "", now=0) is None


@pytest.mark.parametrize(
    "header",
    ["sha256=" + "0" * 64, "sha1=" + "0" * 40, "sha256=zz", ""],
    ids=["another digest", "sha1", "not hex", "empty"],
)
def test_a_github_signature_that_does_not_match_gets_401(client, automation, header):
    verify_with(automation, signatures.GITHUB, GITHUB_SECRET)
    assert post(client, automation, {"HTTP_X_HUB_SIGNATURE_256": header}).status_code == 401
    assert Refusal.objects.count() == 1 and not Delivery.objects.exists()


def test_a_github_signature_under_the_previous_secret_works_during_a_rotation(client, automation):
    verify_with(automation, signatures.GITHUB, GITHUB_SECRET)
    verify_with(automation, signatures.GITHUB, "the new one, pasted from GitHub")
    headers = {"HTTP_X_HUB_SIGNATURE_256": signatures.sign_github(GITHUB_SECRET, BODY)}
    assert post(client, automation, headers).status_code == 200
    verify_with(automation, signatures.GITHUB, "a third one", keep_previous=False)
    assert post(client, automation, headers).status_code == 401


def test_github_signs_no_time_so_a_replayed_body_is_accepted_and_left_to_duplicate_suppression(client, automation):
    """GitHub signs the body alone: a replay cannot be told from GitHub's own redelivery (docs/webhooks.md)."""
    verify_with(automation, signatures.GITHUB, GITHUB_SECRET)
    headers = {"HTTP_X_HUB_SIGNATURE_256": signatures.sign_github(GITHUB_SECRET, BODY)}
    assert [post(client, automation, headers).status_code for _ in range(2)] == [200, 200]


# Stripe


def stripe_headers(secret, *, at=None, body=BODY):
    at = int(time.time()) if at is None else at
    return {"HTTP_STRIPE_SIGNATURE": signatures.sign_stripe(secret, at, body)}


def test_a_stripe_signature_that_matches_is_accepted(client, automation):
    verify_with(automation, signatures.STRIPE, STRIPE_SECRET)
    assert post(client, automation, stripe_headers(STRIPE_SECRET)).status_code == 200
    assert Delivery.objects.get().replay_id


def test_a_stripe_signature_under_another_secret_gets_401(client, automation):
    verify_with(automation, signatures.STRIPE, STRIPE_SECRET)
    assert post(client, automation, stripe_headers("whsec_another")).status_code == 401
    assert refused(Refusal.Reason.SIGNATURE)


def test_a_stale_stripe_signature_gets_401(client, automation):
    verify_with(automation, signatures.STRIPE, STRIPE_SECRET)
    assert post(client, automation, stripe_headers(STRIPE_SECRET, at=int(time.time()) - 400)).status_code == 401
    assert refused(Refusal.Reason.TIMESTAMP)


def test_a_replayed_stripe_request_gets_401(client, automation):
    verify_with(automation, signatures.STRIPE, STRIPE_SECRET)
    headers = stripe_headers(STRIPE_SECRET)
    assert [post(client, automation, headers).status_code for _ in range(2)] == [200, 401]
    assert Delivery.objects.count() == 1
    assert list(Refusal.objects.values_list("reason", flat=True)) == [Refusal.Reason.REPLAYED]


def test_stripe_signatures_under_both_secrets_and_other_schemes_are_read(client, automation):
    verify_with(automation, signatures.STRIPE, STRIPE_SECRET)
    verify_with(automation, signatures.STRIPE, "whsec_rolled")
    at = int(time.time())
    old = signatures.sign_stripe(STRIPE_SECRET, at, BODY).split(",")[1]
    header = f"t={at},v1={'ab' * 32},{old},v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39"
    assert post(client, automation, {"HTTP_STRIPE_SIGNATURE": header}).status_code == 200


# The allow list


def test_an_address_outside_the_allow_list_gets_403_before_its_signature_is_read(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET, networks=["192.0.2.0/24", "2001:db8::/32"])
    headers = standard_headers(STANDARD_SECRET)
    response = post(client, automation, headers, REMOTE_ADDR="198.51.100.7")
    assert (response.status_code, response.content) == (403, b"address not allowed\n")
    assert refused(Refusal.Reason.ADDRESS)
    assert Refusal.objects.get().client_address == "198.51.100.7"
    assert post(client, automation, headers, REMOTE_ADDR="192.0.2.200").status_code == 200


def test_an_allow_list_works_without_a_signature_scheme(client, automation):
    verify_with(automation, "", networks=["192.0.2.0/24"])
    assert post(client, automation, {}, REMOTE_ADDR="192.0.2.1").status_code == 200
    assert post(client, automation, {}, REMOTE_ADDR="2001:db8::1").status_code == 403


def test_behind_trusted_proxies_the_address_they_vouch_for_is_checked(client, automation, settings):
    verify_with(automation, "", networks=["192.0.2.0/24"])
    settings.TRUSTED_PROXY_COUNT = 1
    forwarded = {"REMOTE_ADDR": "10.0.0.1"}
    assert post(client, automation, {}, HTTP_X_FORWARDED_FOR="198.51.100.1, 192.0.2.9", **forwarded).status_code == 200
    assert post(client, automation, {}, HTTP_X_FORWARDED_FOR="192.0.2.9, 198.51.100.1", **forwarded).status_code == 403
    settings.TRUSTED_PROXY_COUNT = 0  # no proxy trusted: a forged header counts for nothing
    assert post(client, automation, {}, HTTP_X_FORWARDED_FOR="192.0.2.9", **forwarded).status_code == 403


# What stays as before


def test_the_handshakes_are_answered_as_before_on_a_verified_url(client, automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET, networks=["192.0.2.0/24"])
    secret = client.post(path_of(automation), HTTP_X_HOOK_SECRET="s3cr3t", REMOTE_ADDR="198.51.100.7")
    assert (secret.status_code, secret["X-Hook-Secret"]) == (200, "s3cr3t")
    challenge = post(client, automation, {}, body=b'{"challenge": "abc"}', REMOTE_ADDR="198.51.100.7")
    assert (challenge.status_code, json.loads(challenge.content)) == (200, {"challenge": "abc"})
    assert client.head(path_of(automation)).status_code == 200
    assert not Delivery.objects.exists() and not Refusal.objects.exists()


def test_a_secret_sealed_under_another_url_key_secret_refuses_every_signature(automation, settings):
    """Changing URL_KEY_SECRET retires the URL too; a URL issued afterwards still has a secret it cannot read."""
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    settings.URL_KEY_SECRET = "another secret altogether"
    check = verification.load(automation.pk, 10)
    assert check.unreadable and check.keys == ()
    with pytest.raises(signatures.Refused) as refusal:
        signatures.verify(check, {}, BODY, "", now=time.time())
    assert refusal.value.reason == Refusal.Reason.UNREADABLE


def test_only_the_latest_refusals_are_kept_and_every_one_is_counted(automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    for _ in range(verification.REFUSALS_KEPT + 7):
        verification.record_refusal(
            automation_id=automation.pk, reason="signature", method="POST", path="/p", address="", body_size=0
        )
    assert Refusal.objects.count() == verification.REFUSALS_KEPT
    assert Verification.objects.get().refused_count == verification.REFUSALS_KEPT + 7


def test_a_secret_is_kept_sealed_shown_as_a_hint_and_never_exported(automation):
    verify_with(automation, signatures.STANDARD, STANDARD_SECRET)
    row = Verification.objects.get()
    stored = json.dumps([getattr(row, field.attname) for field in Verification._meta.concrete_fields], default=str)
    assert STANDARD_SECRET.removeprefix("whsec_") not in stored
    assert row.secret_hint == "whsec_…LaSw"
    assert STANDARD_SECRET.removeprefix("whsec_") not in json.dumps(automation_selectors.document_of(automation))


def test_a_check_shows_no_key_in_its_repr():
    check = signatures.Check(scheme=signatures.GITHUB, keys=(b"top secret",))
    assert "top secret" not in repr(check)
