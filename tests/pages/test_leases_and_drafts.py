"""Leases and drafts on the page: renew on activity (the endpoint app.js calls), release,
logout returns every lease, and drafts autosave without ever becoming a decision."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.urls import reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.models import Decision, Draft, State
from apps.cases.services import claim_case

from .conftest import HTMX


def test_draft_autosave_keeps_values_and_creates_no_decision(claimed_case, worker, client_for):
    client = client_for(worker)
    version = claimed_case.version

    response = client.post(
        reverse("cases:draft", args=[claimed_case.pk]),
        {
            "resolution": "select_po",
            "field-select_po-po_number": "po_799",
            "field-close_invalid-ignored": "not this resolution",
            "note": "Buyer confirmed by phone",
        },
        **HTMX,
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert body.startswith('<span id="draft-status">Draft saved at ')
    assert "A draft is not a decision." in body
    draft = Draft.objects.get(case=claimed_case, user=worker)
    assert (draft.resolution, draft.fields, draft.note) == (
        "select_po",
        {"po_number": "po_799"},
        "Buyer confirmed by phone",
    )
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.CLAIMED and claimed_case.version == version
    assert not Decision.objects.exists()
    # Reopening the case restores what was typed.
    page = client.get(reverse("cases:detail", args=[claimed_case.pk])).content.decode()
    assert 'value="select_po" checked' in page
    assert 'value="po_799" checked' in page
    assert "Buyer confirmed by phone</textarea>" in page
    assert "Draft saved at" in page


def test_draft_without_javascript_redirects_back_with_a_message(claimed_case, worker, client_for):
    response = client_for(worker).post(
        reverse("cases:draft", args=[claimed_case.pk]), {"resolution": "", "note": "thinking"}
    )

    assert response.status_code == 302
    page = client_for(worker).get(response["Location"]).content.decode()
    assert "thinking</textarea>" in page


def test_renew_extends_the_lease_and_returns_the_new_expiry(claimed_case, worker, client_for):
    client = client_for(worker)
    first_expiry = claimed_case.lease_expires_at

    with time_machine.travel(timezone.now() + timedelta(minutes=10)):
        response = client.post(
            reverse("cases:renew", args=[claimed_case.pk]),
            {"lease_token": claimed_case.lease_token, "announce": "1"},
            **HTMX,
        )

    claimed_case.refresh_from_db()
    assert claimed_case.lease_expires_at >= first_expiry + timedelta(minutes=10)
    body = response.content.decode()
    assert response.status_code == 200
    assert body.startswith('<span id="lease-expiry">')
    assert claimed_case.lease_expires_at.strftime("%H:%M UTC") in body
    assert "Lease extended until" in response["HX-Trigger"]


def test_renew_after_the_lease_lapsed_is_409_and_says_so(claimed_case, worker, client_for):
    with time_machine.travel(timezone.now() + timedelta(hours=1)):
        response = client_for(worker).post(
            reverse("cases:renew", args=[claimed_case.pk]),
            {"lease_token": claimed_case.lease_token},
            **HTMX,
        )

    assert response.status_code == 409
    assert "You no longer hold this case" in response.content.decode()


def test_release_returns_the_case_to_the_queue(claimed_case, worker, client_for):
    response = client_for(worker).post(
        reverse("cases:release", args=[claimed_case.pk]),
        {"lease_token": claimed_case.lease_token},
    )

    assert response.status_code == 302
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.OPEN and claimed_case.assignee is None


def test_claiming_a_case_someone_else_holds_is_409_naming_the_holder(
    claimed_case, worker2, client_for
):
    response = client_for(worker2).post(reverse("cases:claim", args=[claimed_case.pk]))

    page = response.content.decode()
    assert response.status_code == 409
    assert "The case is claimed by wendy." in page
    assert "Claimed by wendy" in page  # the fresh page shows who holds it


def test_logout_releases_every_lease_of_the_user(worker, file_invoice_case, client_for):
    cases = [claim_case(case_id=file_invoice_case().pk, actor=worker) for _ in range(2)]
    client = client_for(worker)

    response = client.post(reverse("logout"))

    assert response.status_code == 302
    for case in cases:
        case.refresh_from_db()
        assert case.state == State.OPEN and case.assignee is None
        assert AuditEvent.objects.filter(
            stream=case.pk, action="case.released", reason="released at logout"
        ).exists()
    assert client.get("/").status_code == 302  # logged out


def test_the_lease_panel_carries_what_activity_renewal_needs_only_for_the_holder(
    claimed_case, worker, supervisor, client_for
):
    url = reverse("cases:detail", args=[claimed_case.pk])
    renew_url = reverse("cases:renew", args=[claimed_case.pk])

    holder_page = client_for(worker).get(url).content.decode()
    other_page = client_for(supervisor).get(url).content.decode()

    assert f'data-renew-url="{renew_url}"' in holder_page
    assert f'data-lease-token="{claimed_case.lease_token}"' in holder_page
    assert claimed_case.lease_token not in other_page
