"""Claim and decide through the pages: the accepted path writes the decision and the outbox
event; a stale form gets 409 and sees the decision that won (release case 4); bad fields
get 422 at the field; irreversible resolutions ask first; a resubmitted form replays."""

from __future__ import annotations

import uuid
from datetime import timedelta

import time_machine
from django.urls import reverse
from django.utils import timezone

from apps.cases.models import Decision, OutboxEvent, State
from apps.cases.services import claim_case, decide_case, expire_leases, reconcile_side_effect

from .conftest import HTMX, decision_payload, hidden_value


def test_claim_then_decide_through_forms_leads_to_resolution_pending_with_an_outbox_event(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case()
    client = client_for(worker)
    detail_url = reverse("cases:detail", args=[case.pk])

    claimed = client.post(reverse("cases:claim", args=[case.pk]))
    assert claimed.status_code == 302 and claimed["Location"] == detail_url
    page = client.get(detail_url).content.decode()
    assert "You hold this case. Your lease runs until" in page
    form = {
        name: hidden_value(page, name)
        for name in ("expected_version", "lease_token", "evidence_digest", "resolution_id")
    }

    response = client.post(
        reverse("cases:decide", args=[case.pk]),
        {**form, "resolution": "select_po", "field-select_po-po_number": "po_799", "note": "ok"},
    )

    assert response.status_code == 302 and response["Location"] == detail_url
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    decision = Decision.objects.get(case=case)
    assert (decision.resolution, decision.fields, decision.actor) == (
        "select_po",
        {"po_number": "po_799"},
        worker,
    )
    assert decision.resolution_id == form["resolution_id"]
    event = OutboxEvent.objects.get(case=case)
    assert event.type == "case.decided" and event.body["data"]["fields"] == {"po_number": "po_799"}
    after = client.get(detail_url).content.decode()
    assert "Decision recorded — resuming the workflow" in after
    assert 'id="decide-form"' not in after


def test_every_render_of_the_form_carries_a_fresh_resolution_id(claimed_case, worker, client_for):
    client = client_for(worker)
    url = reverse("cases:detail", args=[claimed_case.pk])

    first = hidden_value(client.get(url).content.decode(), "resolution_id")
    second = hidden_value(client.get(url).content.decode(), "resolution_id")

    assert first != second
    assert uuid.UUID(first) and uuid.UUID(second)


def test_htmx_decide_answers_with_a_client_redirect(claimed_case, worker, client_for):
    response = client_for(worker).post(
        reverse("cases:decide", args=[claimed_case.pk]), decision_payload(claimed_case), **HTMX
    )

    assert response["HX-Redirect"] == reverse("cases:detail", args=[claimed_case.pk])
    assert Decision.objects.filter(case=claimed_case).count() == 1


def test_a_stale_form_gets_409_and_sees_the_decision_of_the_other_reviewer(
    claimed_case, worker, worker2, client_for
):
    stale_form = decision_payload(claimed_case, resolution="select_po")
    # The worker walks away; the lease lapses; a colleague claims and decides.
    with time_machine.travel(timezone.now() + timedelta(hours=1)):
        assert expire_leases() == 1
        taken = claim_case(case_id=claimed_case.pk, actor=worker2)
        decide_case(
            case_id=taken.pk,
            actor=worker2,
            expected_version=taken.version,
            lease_token=taken.lease_token,
            resolution="select_po",
            fields={"po_number": "po_799"},
            note="PO 799 is the open one",
            resolution_id=str(uuid.uuid4()),
            evidence_digest=taken.evidence_digest,
        )

    response = client_for(worker).post(reverse("cases:decide", args=[claimed_case.pk]), stale_form)

    page = response.content.decode()
    assert response.status_code == 409
    assert "Case changed by another reviewer" in page
    assert "Another reviewer already decided this case." in page
    assert "walter" in page and "Select the purchase order" in page and "po_799" in page
    assert "PO 799 is the open one" in page
    assert reverse("cases:detail", args=[claimed_case.pk]) in page  # the reload link
    assert Decision.objects.get(case=claimed_case).actor == worker2


def test_a_form_loaded_before_another_change_gets_409_and_nothing_is_decided(
    claimed_case, worker, client_for
):
    stale_form = decision_payload(claimed_case)
    reconcile_side_effect(
        case_id=claimed_case.pk,
        actor=worker,
        expected_version=claimed_case.version,
        state="confirmed_applied",
        provider_record="erp-1",
    )

    response = client_for(worker).post(
        reverse("cases:decide", args=[claimed_case.pk]), stale_form, **HTMX
    )

    body = response.content.decode()
    assert response.status_code == 409
    assert body.lstrip().startswith('<section id="decision-form"')
    assert "The case changed since you loaded it" in body
    assert not Decision.objects.filter(case=claimed_case).exists()


def test_missing_required_field_is_422_with_the_error_at_the_field(
    claimed_case, worker, client_for
):
    response = client_for(worker).post(
        reverse("cases:decide", args=[claimed_case.pk]),
        decision_payload(claimed_case, resolution="select_po", fields={}, note="draft note"),
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert "Purchase order is required." in page
    assert 'id="field-select_po-po_number-error"' in page
    assert 'aria-describedby="field-select_po-po_number-error"' in page
    assert '<a href="#field-select_po-po_number-0">Purchase order is required.</a>' in page
    assert "draft note</textarea>" in page  # what the worker typed is kept
    assert 'value="select_po" checked' in page
    assert not Decision.objects.filter(case=claimed_case).exists()


def test_invalid_decimal_over_htmx_swaps_the_form_region_with_422(
    supervisor, file_invoice_case, client_for
):
    case = claim_case(case_id=file_invoice_case(**{"class": "policy_denied"}).pk, actor=supervisor)

    response = client_for(supervisor).post(
        reverse("cases:decide", args=[case.pk]),
        decision_payload(
            case,
            resolution="approve_exception",
            fields={"approved_amount": "twelve"},
            note="one-off",
            confirm=True,
        ),
        **HTMX,
    )

    body = response.content.decode()
    assert response.status_code == 422
    assert body.lstrip().startswith('<section id="decision-form"')
    assert "Approved amount must be a number." in body
    assert 'inputmode="decimal"' in body and 'aria-invalid="true"' in body


def test_irreversible_resolution_asks_for_confirmation_before_anything_is_recorded(
    claimed_case, worker, client_for
):
    client = client_for(worker)
    url = reverse("cases:decide", args=[claimed_case.pk])
    first = decision_payload(claimed_case, resolution="close_invalid", note="Duplicate invoice")

    asked = client.post(url, first)

    page = asked.content.decode()
    assert asked.status_code == 200
    assert 'id="confirm-panel"' in page and "autofocus" in page
    assert "Confirm: Close as invalid" in page
    assert not Decision.objects.filter(case=claimed_case).exists()
    # The confirmation posts the same form again, with its concurrency fields unchanged.
    assert hidden_value(page, "expected_version") == first["expected_version"]

    confirmed = client.post(
        url,
        {
            **first,
            "resolution_id": hidden_value(page, "resolution_id"),
            "confirm": "1",
        },
    )

    assert confirmed.status_code == 302
    assert Decision.objects.get(case=claimed_case).resolution == "close_invalid"


def test_the_same_form_submitted_twice_records_one_decision(claimed_case, worker, client_for):
    client = client_for(worker)
    payload = decision_payload(claimed_case)
    url = reverse("cases:decide", args=[claimed_case.pk])

    first = client.post(url, payload)
    second = client.post(url, payload)

    assert first.status_code == second.status_code == 302
    assert Decision.objects.filter(case=claimed_case).count() == 1
    assert OutboxEvent.objects.filter(case=claimed_case).count() == 1


def test_request_information_is_not_offered_as_a_decision(claimed_case, worker, client_for):
    response = client_for(worker).post(
        reverse("cases:decide", args=[claimed_case.pk]),
        decision_payload(claimed_case, resolution="request_information", fields={}),
    )

    assert response.status_code == 422
    assert "Choose one of the allowed resolutions." in response.content.decode()
    assert not Decision.objects.filter(case=claimed_case).exists()
