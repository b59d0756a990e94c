"""The release suite of DESIGN.md, cases 1-7 and the minimal 9, end to end: the workflow
files through the REST API with its key, people work through the pages, the relay calls a
real local webhook endpoint. Run before every workflow or policy release."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.audit.services import verify
from apps.cases.models import Case, Decision, EvidenceItem, OutboxEvent, State
from apps.cases.services import relay_due_events
from tests.conftest import invoice_packet
from tests.pages.conftest import hidden_value

FORM_FIELDS = ("expected_version", "lease_token", "evidence_digest", "resolution_id")


def file(api: Any, packet: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    response = api.post("/api/v1/cases", packet or invoice_packet(**overrides), format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def claim_and_read_form(browser: Any, case_id: str) -> dict[str, str]:
    claimed = browser.post(reverse("cases:claim", args=[case_id]))
    assert claimed.status_code == 302
    page = browser.get(reverse("cases:detail", args=[case_id])).content.decode()
    return {name: hidden_value(page, name) for name in FORM_FIELDS}


def submit(browser: Any, case_id: str, form: dict[str, str], **choice: str) -> Any:
    return browser.post(reverse("cases:decide", args=[case_id]), {**form, **choice})


SELECT_PO_781 = {"resolution": "select_po", "field-select_po-po_number": "po_781", "note": ""}


def test_1_missing_evidence_becomes_exactly_one_assigned_case_with_the_right_due_time(
    api, worker, browser_of
):
    packet = invoice_packet(
        **{
            "class": "evidence_required",
            "workflow_instance_id": "wf_missing_1",
            "reason_code": "missing_goods_receipt",
        }
    )
    packet["evidence"] = packet["evidence"][:1]
    first = file(api, packet)
    again = file(api, packet)  # the workflow retries after a timeout

    assert again["id"] == first["id"]
    assert Case.objects.filter(workflow_instance_id="wf_missing_1").count() == 1
    case = Case.objects.get(pk=first["id"])
    assert case.queue.name == "accounts_payable"
    # evidence_required's service target is 8 hours from filing, kept as the original too.
    assert case.due_at == case.created_at + timedelta(hours=8) == case.original_due_at
    assert parse_datetime(first["due_at"]) == case.due_at

    claim_and_read_form(browser_of(worker), case.pk)
    case.refresh_from_db()
    assert (case.state, case.assignee) == (State.CLAIMED, worker)
    queue_page = browser_of(worker).get(reverse("cases:queue")).content.decode()
    assert queue_page.count(case.case_ref) >= 1


def test_2_contradictory_evidence_keeps_both_snapshots_and_blocks_automatic_completion(
    api, worker, browser_of
):
    created = file(api)
    case = Case.objects.get(pk=created["id"])

    snapshots = list(EvidenceItem.objects.filter(case=case).order_by("position"))
    assert [item.ref for item in snapshots] == ["po_781", "po_799"]
    assert all(len(item.digest) == 64 for item in snapshots)
    page = browser_of(worker).get(reverse("cases:detail", args=[case.pk])).content.decode()
    for item in snapshots:
        assert item.digest in page and item.ref in page
    # Nothing lets the workflow finish on its own: no decision, no event, until a person acts.
    assert created["state"] == "open" and created["decision"] is None
    assert "select_po" in created["allowed_resolutions"]
    assert not OutboxEvent.objects.filter(case=case).exists()
    feed = api.get("/api/v1/decisions").json()
    assert feed["events"] == []


def test_3_a_reviewer_outside_the_business_scope_can_neither_open_evidence_nor_resolve(
    api, worker, supervisor, outsider, viewer, browser_of
):
    restricted = {
        "ref": "bank_letter",
        "source": "treasury",
        "classification": "restricted",
        "source_timestamp": "2026-08-31T14:00:00Z",
        "content": {"iban": "DE89 3704 0044 0532 0130 00"},
    }
    created = file(api, evidence=[*invoice_packet()["evidence"], restricted])
    case_id = created["id"]
    # Below the evidence's classification, a worker is not even eligible to claim it.
    assert browser_of(worker).post(reverse("cases:claim", args=[case_id])).status_code == 403
    form = claim_and_read_form(browser_of(supervisor), case_id)

    outside = browser_of(outsider)
    assert outside.get(reverse("cases:detail", args=[case_id])).status_code == 404
    assert submit(outside, case_id, form, **SELECT_PO_781).status_code == 404
    assert case_id not in outside.get(reverse("cases:queue")).content.decode()

    # In scope but read-only: sees the case, not the restricted content, and cannot resolve.
    reader = browser_of(viewer)
    page = reader.get(reverse("cases:detail", args=[case_id])).content.decode()
    assert "DE89 3704" not in page and "Redacted" in page
    assert submit(reader, case_id, form, **SELECT_PO_781).status_code == 403
    assert not Decision.objects.filter(case_id=case_id).exists()


def test_4_two_reviewers_resolving_the_same_version_one_accepted_one_conflict(
    api, worker, worker2, browser_of
):
    case_id = file(api)["id"]
    first, second = browser_of(worker), browser_of(worker2)
    form = claim_and_read_form(first, case_id)
    # The second reviewer had the same version open and submits after the first.
    accepted = submit(first, case_id, form, **SELECT_PO_781)
    late = submit(
        second,
        case_id,
        {**form, "resolution_id": "late-reviewer"},
        resolution="select_po",
        **{"field-select_po-po_number": "po_799"},
    )

    assert accepted.status_code == 302
    assert late.status_code == 409
    body = late.content.decode()
    assert "Case changed by another reviewer" in body
    assert worker.get_username() in body  # shown who won, and with what
    decision = Decision.objects.get(case_id=case_id)
    assert (decision.actor, decision.fields) == (worker, {"po_number": "po_781"})


def test_5_an_unknown_side_effect_removes_blind_retry_until_reconciled(api, supervisor, browser_of):
    created = file(
        api,
        **{
            "class": "execution_uncertain",
            "reason_code": "write_timeout",
            "side_effect_state": "unknown",
        },
    )
    case_id = created["id"]
    assert "retry_write" not in created["allowed_resolutions"]
    browser = browser_of(supervisor)
    form = claim_and_read_form(browser, case_id)
    page = browser.get(reverse("cases:detail", args=[case_id])).content.decode()
    assert 'value="retry_write"' not in page
    blind = submit(browser, case_id, form, resolution="retry_write", note="try again")
    assert blind.status_code == 422
    assert not Decision.objects.filter(case_id=case_id).exists()

    reported = api.post(
        f"/api/v1/cases/{case_id}/side-effect",
        {"state": "confirmed_rejected", "provider_record": {"id": "pay_77"}},
        format="json",
    )
    assert reported.status_code == 200
    assert "retry_write" in reported.json()["allowed_resolutions"]
    page = browser.get(reverse("cases:detail", args=[case_id])).content.decode()
    assert 'value="retry_write"' in page


def test_6_a_valid_resolution_resumes_the_workflow_from_its_checkpoint_exactly_once(
    api, worker, browser_of, workflow_endpoint, django_capture_on_commit_callbacks
):
    created = file(api, checkpoint_id="cp_0193", resume_handle="thread-42")
    browser = browser_of(worker)
    form = claim_and_read_form(browser, created["id"])
    with django_capture_on_commit_callbacks(execute=False):
        assert submit(browser, created["id"], form, **SELECT_PO_781).status_code == 302
    # A second submit of the same form (a double click) replays the first answer.
    assert submit(browser, created["id"], form, **SELECT_PO_781).status_code == 302

    relay_due_events()
    relay_due_events()  # the sweep again: nothing left to send

    deliveries = workflow_endpoint.requests
    assert len(deliveries) == 1
    assert deliveries[0].signature_error is None
    body = json.loads(deliveries[0].body)
    assert body["data"]["checkpoint_id"] == "cp_0193"
    assert body["data"]["resume_handle"] == "thread-42"
    assert body["data"]["resolution"] == "select_po"
    assert body["data"]["fields"] == {"po_number": "po_781"}
    case = api.get(f"/api/v1/cases/{created['id']}").json()
    assert case["state"] == "resolved"
    assert Decision.objects.filter(case_id=created["id"]).count() == 1
    assert list(verify()) == []


def test_7_a_failed_resume_stays_visible_and_is_retried_safely_with_the_same_event(
    api,
    worker,
    supervisor,
    browser_of,
    workflow_endpoint,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "DELIVERY_MAX_ATTEMPTS": 2}
    workflow_endpoint.answer_with(503)
    case_id = file(api)["id"]
    worker_browser = browser_of(worker)
    form = claim_and_read_form(worker_browser, case_id)
    with django_capture_on_commit_callbacks(execute=False):
        submit(worker_browser, case_id, form, **SELECT_PO_781)

    relay_due_events()
    event = OutboxEvent.objects.get(case_id=case_id)
    relay_due_events(now=event.next_attempt_at + timedelta(seconds=1))

    case = Case.objects.get(pk=case_id)
    assert (case.state, case.delivery_status) == (State.RESOLUTION_PENDING, "failed")
    board = browser_of(supervisor)
    recovery = board.get(reverse("cases:recovery")).content.decode()
    assert case.case_ref in recovery
    assert "recovery pending" in recovery
    # Nobody is asked to decide again: the worker's page offers no decision form.
    assert (
        'id="decide-form"'
        not in worker_browser.get(reverse("cases:detail", args=[case_id])).content.decode()
    )

    workflow_endpoint.answer_with(204)
    with django_capture_on_commit_callbacks(execute=False):
        assert board.post(reverse("cases:retry_delivery", args=[case_id])).status_code == 302
    relay_due_events(now=timezone.now() + timedelta(seconds=1))

    ids = {request.webhook_id for request in workflow_endpoint.requests}
    assert ids == {event.pk}
    assert [r.answered for r in workflow_endpoint.requests] == [503, 503, 204]
    case.refresh_from_db()
    assert (case.state, case.delivery_status) == (State.RESOLVED, "delivered")
    assert Decision.objects.filter(case_id=case_id).count() == 1


def test_9_a_checkpoint_of_an_unsupported_version_is_quarantined_not_offered(
    api, worker, supervisor, browser_of
):
    created = file(api, workflow_version="15")
    assert (created["state"], created["queue"]) == ("quarantined", "platform")
    case = Case.objects.get(pk=created["id"])
    assert case.case_ref not in browser_of(worker).get(reverse("cases:queue")).content.decode()
    # Even the platform team cannot decide on a checkpoint the desk cannot read.
    response = browser_of(supervisor).post(reverse("cases:claim", args=[case.pk]))
    case.refresh_from_db()
    assert case.state == State.QUARANTINED and response.status_code in (302, 409)
    assert not Decision.objects.filter(case=case).exists()
