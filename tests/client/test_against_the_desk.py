"""The client against the real desk (pytest-django's live_server): every verb, the error
classes the desk's answers map to, and the pull feed with acknowledgements."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.cases.models import Case as CaseRow
from apps.cases.models import OutboxEvent
from exception_desk_client import (
    Conflict,
    DedupeConflict,
    Desk,
    InvalidRequest,
    NotFound,
    Unauthorized,
)
from tests.api.conftest import decide
from tests.conftest import invoice_packet

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def desk(live_server: Any, api_source: tuple[Any, str]) -> Iterator[Desk]:
    with Desk(live_server.url, api_source[1], retries=0, timeout=10) as client:
        yield client


def test_filing_is_idempotent_and_a_changed_packet_under_the_same_key_is_a_dedupe_conflict(
    desk,
):
    packet = invoice_packet(dedupe_key="langgraph:thread-7:cp-1")
    first = desk.file_case(packet)
    again = desk.file_case(packet)

    assert first.created and not again.created
    assert again.id == first.id and first.queue == "accounts_payable"
    assert "select_po" in first.allowed_resolutions and first.state == "open"
    assert CaseRow.objects.filter(dedupe_key="langgraph:thread-7:cp-1").count() == 1

    with pytest.raises(DedupeConflict) as raised:
        desk.file_case({**packet, "summary": "Something else entirely"})
    assert raised.value.status == 409 and raised.value.case_id == first.id
    assert raised.value.errors


def test_refusals_arrive_as_typed_errors_with_the_desks_field_paths(desk, live_server):
    with pytest.raises(InvalidRequest) as raised:
        desk.file_case({**invoice_packet(), "chain_of_thought": "I think..."})
    assert raised.value.status == 400 and "chain_of_thought" in raised.value.errors

    with pytest.raises(NotFound):
        desk.get_case("exc_does_not_exist")
    stranger = Desk(live_server.url, "edk_000000000000_not-a-key", retries=0)
    with stranger, pytest.raises(Unauthorized):
        stranger.get_case("exc_does_not_exist")


def test_evidence_side_effect_and_cancel_change_the_case_as_the_desk_reports(desk, worker):
    case = desk.file_case(invoice_packet())
    item = {
        "ref": "goods_receipt_5531",
        "source": "erp",
        "source_timestamp": "2026-08-31T15:00:00Z",
        "classification": "internal",
        "content": {"po_number": "PO-781", "receipt": "GR-5531"},
    }
    appended = desk.append_evidence(case.id, [item])
    assert appended.evidence_version == 2 and appended.evidence_digest != case.evidence_digest

    reported = desk.report_side_effect(
        case.id, state="confirmed_rejected", provider_record={"id": "pay_77"}
    )
    assert reported.side_effect_state == "confirmed_rejected"

    canceled = desk.cancel(case.id, reason="Vendor withdrew the invoice.")
    assert (canceled.state, canceled.close_reason) == ("closed", "canceled_by_workflow")
    assert desk.get_case(case.id).state == "closed"

    decided = desk.file_case(invoice_packet())
    decide(decided.id, worker)
    with pytest.raises(Conflict) as raised:
        desk.cancel(decided.id)
    assert raised.value.case_id == decided.id
    assert desk.get_case(decided.id).decision.resolution == "select_po"


def test_the_pull_feed_yields_unacknowledged_decisions_oldest_first_until_acked(desk, worker):
    case_ids = [desk.file_case(invoice_packet()).id for _ in range(3)]
    for case_id in case_ids:
        decide(case_id, worker)

    handled = []
    # A page of two: the iterator fetches again after the acks and finds the third.
    for event in desk.decisions(limit=2):
        handled.append(event.case_id)
        assert event.is_decision and event.fields == {"po_number": "po_781"}
        assert desk.ack(event) == "delivered"

    assert handled == case_ids
    assert list(desk.decisions()) == []
    assert {desk.get_case(case_id).state for case_id in case_ids} == {"resolved"}
    assert set(OutboxEvent.objects.values_list("delivered_via", flat=True)) == {"ack"}


def test_unacknowledged_events_stay_in_the_feed_for_the_next_pass(desk, worker):
    case_id = desk.file_case(invoice_packet()).id
    decide(case_id, worker)

    first_pass = [event.id for event in desk.decisions()]
    second_pass = [event.id for event in desk.decisions()]

    assert first_pass == second_pass and len(first_pass) == 1
    assert desk.get_case(case_id).state == "resolution_pending"
