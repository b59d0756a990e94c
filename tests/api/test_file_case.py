"""Filing a case through POST /api/v1/cases and reading it back."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEvent
from apps.cases.models import Case, EvidenceItem, State
from tests.conftest import invoice_packet

from .conftest import CASES_URL, audit_actions, case_url, errors_of, written_rows


def decision_page(case_id: str) -> str:
    """The worker's decision page (its route may not exist yet; the API falls back)."""
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("cases:detail", args=[case_id])
    except NoReverseMatch:
        return f"/cases/{case_id}/"


@pytest.mark.parametrize("url", [CASES_URL, CASES_URL + "/"])
def test_filing_creates_one_routed_prioritized_case(api, url):
    packet = invoice_packet(resume_handle="sfn-task-token-AAAA")

    response = api.post(url, packet, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    case = Case.objects.get(pk=body["id"])
    assert body["state"] == case.state == State.OPEN
    assert body["queue"] == case.queue.name == "accounts_payable"
    assert body["severity"] == case.severity
    assert body["priority"] == {
        "band": case.priority_band,
        "score": case.priority_score,
        "explanation": case.priority_explanation,
        "components": case.priority_components,
        "policy_version": case.priority_policy_version,
    }
    assert body["priority"]["explanation"].startswith(case.priority_band)
    assert body["due_at"] == body["original_due_at"]
    assert body["allowed_resolutions"] == ["select_po", "request_information", "close_invalid"]
    assert body["version"] == case.version == 1
    assert body["url"] == f"http://testserver{decision_page(case.pk)}"
    assert response["Location"] == f"http://testserver{case_url(case.pk)}"
    assert body["case_ref"] == packet["case_ref"]
    assert body["workflow_type"] == "invoice_match"
    assert body["workflow_version"] == "17"
    assert body["side_effect_state"] == "none_attempted"
    assert body["evidence_version"] == 1
    assert body["evidence_digest"] == case.evidence_digest
    assert body["close_reason"] == ""
    assert body["delivery_status"] == "none"
    assert body["decision"] is None
    # The workflow's own handle is stored for the resume event, never echoed in the case.
    assert case.resume_handle == "sfn-task-token-AAAA"
    assert "resume_handle" not in body
    assert audit_actions(case.pk) == ["case.filed"]


def test_filed_case_keeps_the_packet_facts_and_evidence_snapshots(api):
    packet = invoice_packet(
        attributes={
            "tenant": "acme-eu",
            "region": "eu",
            "amount": 12400.5,
            "currency": "eur",
            "initiated_by": "ap-bot",
            "cost_center": "CC-17",
        }
    )

    body = api.post(CASES_URL, packet, format="json").json()

    case = Case.objects.get(pk=body["id"])
    assert case.workflow_instance_id == packet["workflow_instance_id"]
    assert case.checkpoint_id == "cp_0193"
    assert case.reason_code == "multiple_po_match"
    assert case.timeline == packet["timeline"]
    assert case.trace_ref == "trace_932"
    # A JSON number becomes a decimal string; the workflow's own attributes are kept.
    assert case.attributes["amount"] == "12400.5"
    assert case.attributes["currency"] == "EUR"
    assert case.attributes["cost_center"] == "CC-17"
    items = list(EvidenceItem.objects.filter(case=case).order_by("position"))
    assert [item.ref for item in items] == ["po_781", "po_799"]
    assert items[0].content == packet["evidence"][0]["content"]
    assert items[0].source_timestamp.isoformat() == "2026-08-31T14:19:59+00:00"
    assert len(items[0].digest) == 64


def test_evidence_timestamp_with_offset_is_kept_as_the_same_instant(api):
    packet = invoice_packet()
    packet["evidence"][0]["source_timestamp"] = "2026-08-31T16:19:59+02:00"

    body = api.post(CASES_URL, packet, format="json").json()

    item = EvidenceItem.objects.get(case_id=body["id"], position=0)
    assert item.source_timestamp.isoformat() == "2026-08-31T14:19:59+00:00"


def test_unsupported_workflow_version_is_quarantined_in_the_platform_queue(api):
    response = api.post(CASES_URL, invoice_packet(workflow_version="15"), format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    case = Case.objects.get(pk=body["id"])
    assert body["state"] == case.state == State.QUARANTINED
    assert body["queue"] == case.queue.name == "platform"
    filed = AuditEvent.objects.get(stream=case.pk, action="case.filed")
    assert "quarantined" in filed.after["routing"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("class", "vibes_off"), ("workflow_type", "teleport_goods")],
)
def test_unknown_class_or_workflow_type_is_400_naming_it(api, field, value):
    before = written_rows()

    response = api.post(CASES_URL, invoice_packet(**{field: value}), format="json")

    assert response.status_code == 400
    assert value in errors_of(response)[field][0]
    assert written_rows() == before


@pytest.mark.parametrize("slash", ["", "/"])
def test_reading_a_case_returns_its_representation(api, filed, slash):
    created = filed()

    response = api.get(case_url(created["id"]) + slash)

    assert response.status_code == 200
    assert response.json() == created


def test_reading_a_missing_case_is_404_in_the_error_shape(api):
    response = api.get(case_url("exc_doesnotexist"))

    assert response.status_code == 404
    assert errors_of(response) == {"detail": ["No such case."]}


def test_case_shows_its_decision_once_decided(api, filed, worker):
    from .conftest import decide

    created = filed()
    decide(created["id"], worker)

    body = api.get(case_url(created["id"])).json()

    assert body["state"] == "resolution_pending"
    assert body["delivery_status"] == "pending"
    assert body["decision"]["resolution"] == "select_po"
    assert body["decision"]["fields"] == {"po_number": "po_781"}
    assert body["decision"]["note"] == ""
    assert body["decision"]["decided_at"]
    assert body["allowed_resolutions"] == ["select_po", "request_information", "close_invalid"]
