"""What the workflow may do to a filed case: add evidence, report a side effect, cancel."""

from __future__ import annotations

from apps.audit.models import AuditEvent
from apps.cases.models import Case, EvidenceItem, State
from apps.cases.services import claim_case, request_information
from tests.conftest import invoice_packet

from .conftest import audit_actions, case_url, decide, errors_of, written_rows

NEW_EVIDENCE = {
    "evidence": [
        {
            "ref": "vendor_statement_0831",
            "source": "vendor_portal",
            "source_timestamp": "2026-08-31T15:02:11Z",
            "classification": "confidential",
            "content": {"open_items": ["PO-781"], "statement_total": "12400.00"},
        }
    ]
}


def test_new_evidence_is_a_new_version_and_keeps_the_old(api, filed):
    created = filed()

    response = api.post(case_url(created["id"], "evidence"), NEW_EVIDENCE, format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    case = Case.objects.get(pk=created["id"])
    assert body["evidence_version"] == case.evidence_version == 2
    assert body["evidence_digest"] == case.evidence_digest != created["evidence_digest"]
    assert body["version"] == case.version == created["version"] + 1
    versions = list(
        EvidenceItem.objects.filter(case=case)
        .order_by("version", "position")
        .values_list("version", "ref")
    )
    assert versions == [(1, "po_781"), (1, "po_799"), (2, "vendor_statement_0831")]
    assert audit_actions(case.pk) == ["case.filed", "case.evidence_added"]


def test_new_evidence_returns_a_waiting_case_to_open(api, filed, worker):
    created = filed()
    claimed = claim_case(case_id=created["id"], actor=worker)
    request_information(
        case_id=claimed.pk,
        actor=worker,
        expected_version=claimed.version,
        lease_token=claimed.lease_token,
        question="Which PO does the vendor statement list as open?",
        asked_of="vendor",
    )
    assert Case.objects.get(pk=created["id"]).state == State.WAITING

    response = api.post(case_url(created["id"], "evidence/"), NEW_EVIDENCE, format="json")

    assert response.status_code == 200
    assert response.json()["state"] == "open"
    case = Case.objects.get(pk=created["id"])
    assert case.state == State.OPEN
    assert case.waiting_on == {}
    assert audit_actions(case.pk)[-1] == "case.evidence_added"


def test_evidence_needs_at_least_one_valid_item(api, filed):
    created = filed()
    before = written_rows()

    empty = api.post(case_url(created["id"], "evidence"), {"evidence": []}, format="json")
    naive = api.post(
        case_url(created["id"], "evidence"),
        {"evidence": [{**NEW_EVIDENCE["evidence"][0], "source_timestamp": "2026-08-31 15:02"}]},
        format="json",
    )
    stray = api.post(case_url(created["id"], "evidence"), {**NEW_EVIDENCE, "x": 1}, format="json")

    assert empty.status_code == naive.status_code == stray.status_code == 400
    assert list(errors_of(empty)) == ["evidence"]
    assert list(errors_of(naive)) == ["evidence.0.source_timestamp"]
    assert list(errors_of(stray)) == ["x"]
    assert written_rows() == before
    assert Case.objects.get(pk=created["id"]).evidence_version == 1


def test_evidence_for_a_decided_case_is_409(api, filed, worker):
    created = filed()
    decide(created["id"], worker)

    response = api.post(case_url(created["id"], "evidence"), NEW_EVIDENCE, format="json")

    assert response.status_code == 409
    assert response.json()["case_id"] == created["id"]
    assert Case.objects.get(pk=created["id"]).evidence_version == 1


def test_reporting_the_side_effect_restores_retry_like_resolutions(api):
    packet = invoice_packet(**{"class": "execution_uncertain", "side_effect_state": "unknown"})
    created = api.post("/api/v1/cases", packet, format="json").json()
    assert "retry_write" not in created["allowed_resolutions"]

    response = api.post(
        case_url(created["id"], "side-effect"),
        {
            "state": "confirmed_rejected",
            "provider_record": {"payment_id": "pay_553", "status": "failed"},
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["side_effect_state"] == "confirmed_rejected"
    assert "retry_write" in body["allowed_resolutions"]
    case = Case.objects.get(pk=created["id"])
    assert case.side_effect_state == "confirmed_rejected"
    assert case.side_effect_record["payment_id"] == "pay_553"
    event = AuditEvent.objects.get(stream=case.pk, action="case.side_effect_reconciled")
    assert event.actor_label == "erp-workflows"


def test_side_effect_report_must_be_a_confirmation_with_a_record(api, filed):
    created = filed()
    before = written_rows()
    url = case_url(created["id"], "side-effect")

    unknown = api.post(url, {"state": "unknown", "provider_record": {"id": "x"}}, format="json")
    no_record = api.post(url, {"state": "confirmed_applied"}, format="json")
    empty_record = api.post(
        url, {"state": "confirmed_applied", "provider_record": {}}, format="json"
    )

    assert list(errors_of(unknown)) == ["state"]
    assert list(errors_of(no_record)) == ["provider_record"]
    assert list(errors_of(empty_record)) == ["provider_record"]
    assert written_rows() == before


def test_cancel_closes_the_case_as_canceled_by_the_workflow(api, filed):
    created = filed()

    response = api.post(
        case_url(created["id"], "cancel"), {"reason": "invoice withdrawn"}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "closed"
    assert body["close_reason"] == "canceled_by_workflow"
    case = Case.objects.get(pk=created["id"])
    assert case.state == State.CLOSED
    event = AuditEvent.objects.get(stream=case.pk, action="case.canceled")
    assert event.reason == "invoice withdrawn"


def test_cancel_without_a_body_works_and_twice_is_harmless(api, filed):
    created = filed()

    first = api.post(case_url(created["id"], "cancel"))
    second = api.post(case_url(created["id"], "cancel/"))

    assert first.status_code == second.status_code == 200
    assert second.json()["state"] == "closed"
    assert audit_actions(created["id"]).count("case.canceled") == 1


def test_cancel_after_a_decision_is_409_and_keeps_the_decision(api, filed, worker):
    created = filed()
    decide(created["id"], worker)

    response = api.post(case_url(created["id"], "cancel"), {"reason": "too late"}, format="json")

    assert response.status_code == 409
    assert response.json()["case_id"] == created["id"]
    case = Case.objects.get(pk=created["id"])
    assert case.state == State.RESOLUTION_PENDING
    assert case.decision.resolution == "select_po"
    assert "case.canceled" not in audit_actions(case.pk)
