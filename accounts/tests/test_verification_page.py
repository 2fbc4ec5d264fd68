"""The verification of an automation's webhook URL, set on its owner's page (/account/automations/<id>/verification)."""

import re

import pytest
from django.urls import reverse

from hooks import signatures, verification
from hooks.models import Refusal, Verification

pytestmark = pytest.mark.django_db

GITHUB_SECRET = "pasted-from-github-0123456789"


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def automation(make_automation):
    return make_automation([])


def page(automation):
    return reverse("account-verification", args=[automation.pk])


def form(**changes):
    return {"scheme": "", "tolerance_seconds": "300", "allowed_networks": "", "keep_previous": "on", **changes}


def test_another_owners_automation_is_a_404_and_cannot_be_changed(signed_in, make_automation, another_account):
    theirs = make_automation(user=another_account)
    assert signed_in.get(page(theirs)).status_code == 404
    assert signed_in.post(page(theirs), form(scheme="github", secret=GITHUB_SECRET)).status_code == 404
    assert not Verification.objects.exists()


def test_a_signed_out_visitor_is_sent_to_sign_in(client, automation):
    assert client.get(page(automation)).status_code == 302


def test_the_form_needs_its_csrf_token(csrf_client, owner, automation):
    csrf_client.force_login(owner)
    assert csrf_client.post(page(automation), form(scheme="github", secret=GITHUB_SECRET)).status_code == 403
    assert not Verification.objects.exists()


def test_a_github_secret_is_saved_sealed_and_shown_only_as_a_hint(signed_in, automation):
    response = signed_in.post(page(automation), form(scheme="github", secret=GITHUB_SECRET))
    assert response.status_code == 302
    row = Verification.objects.get()
    assert (row.scheme, row.secret_hint) == ("github", "…6789")
    assert verification.unseal(row.secret_sealed) == GITHUB_SECRET
    shown = signed_in.get(page(automation)).content.decode()
    assert GITHUB_SECRET not in shown and "…6789" in shown
    assert "GitHub" in signed_in.get(reverse("account-automation", args=[automation.pk])).content.decode()


def test_github_and_stripe_need_the_pasted_secret(signed_in, automation):
    response = signed_in.post(page(automation), form(scheme="stripe"))
    assert response.status_code == 400
    assert not Verification.objects.exists()


def test_standard_webhooks_generates_a_secret_shown_once(signed_in, automation):
    response = signed_in.post(page(automation), form(scheme="standard"))
    assert response.status_code == 200
    generated = re.search(r'value="(whsec_[^"]+)"', response.content.decode()).group(1)
    signatures.standard_key(generated)
    assert verification.unseal(Verification.objects.get().secret_sealed) == generated
    assert generated not in signed_in.get(page(automation)).content.decode()


def test_a_rotation_keeps_the_previous_secret_until_it_is_ended(signed_in, automation):
    signed_in.post(page(automation), form(scheme="github", secret=GITHUB_SECRET))
    signed_in.post(page(automation), form(scheme="github", secret="the-next-secret-abcd"))
    row = Verification.objects.get()
    assert (row.secret_hint, row.previous_hint) == ("…abcd", "…6789")
    signed_in.post(page(automation), form(scheme="github", forget_previous="on"))
    row.refresh_from_db()
    assert (row.secret_hint, row.previous_hint, row.previous_sealed) == ("…abcd", "", "")


def test_a_malformed_standard_secret_or_network_is_refused_with_its_field(signed_in, automation):
    response = signed_in.post(page(automation), form(scheme="standard", secret="whsec_not-base64!"))
    assert response.status_code == 400
    response = signed_in.post(page(automation), form(allowed_networks="192.0.2.0/24\nnot-a-network"))
    assert response.status_code == 400
    assert "not-a-network" in response.content.decode()
    assert not Verification.objects.exists()


def test_an_allow_list_alone_is_saved_as_networks(signed_in, automation):
    assert signed_in.post(page(automation), form(allowed_networks="192.0.2.5/24, 2001:db8::1")).status_code == 302
    assert Verification.objects.get().allowed_networks == ["192.0.2.0/24", "2001:db8::1/128"]


def test_refusals_are_listed_for_the_owner_on_the_verification_and_runs_pages(signed_in, automation):
    signed_in.post(page(automation), form(scheme="github", secret=GITHUB_SECRET))
    verification.record_refusal(
        automation_id=automation.pk,
        reason=Refusal.Reason.TIMESTAMP,
        method="POST",
        path="/automation-{key}",
        address="198.51.100.7",
        body_size=12,
    )
    for name in ("account-verification", "account-runs"):
        shown = signed_in.get(reverse(name, args=[automation.pk])).content.decode()
        assert "timestamp outside tolerance" in shown and "198.51.100.7" in shown, name


def test_staff_see_refusals_and_hints_in_admin_never_a_secret(admin_client, automation):
    verification.save(
        automation_id=automation.pk,
        scheme="github",
        tolerance_seconds=300,
        new_secret=GITHUB_SECRET,
        allowed_networks=[],
    )
    verification.record_refusal(
        automation_id=automation.pk, reason="signature", method="POST", path="/p", address="", body_size=0
    )
    shown = admin_client.get(reverse("admin:hooks_verification_change", args=[automation.pk])).content.decode()
    assert "…6789" in shown and GITHUB_SECRET not in shown
    refusals = admin_client.get(reverse("admin:hooks_refusal_changelist")).content.decode()
    assert "signature did not match" in refusals
