"""Filing is idempotent by dedupe key: a repeat is the same case, a clash is a 409."""

from __future__ import annotations

from apps.audit.models import AuditEvent
from apps.cases.models import Case
from tests.conftest import invoice_packet

from .conftest import CASES_URL, errors_of, written_rows


def test_repeating_the_same_packet_returns_the_same_case_with_200(api):
    packet = invoice_packet()
    first = api.post(CASES_URL, packet, format="json")
    rows_after_first = written_rows()

    again = api.post(CASES_URL, packet, format="json")

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json() == first.json()
    assert written_rows() == rows_after_first
    assert AuditEvent.objects.filter(action="case.filed").count() == 1


def test_omitted_and_null_optional_fields_are_the_same_packet(api):
    packet = invoice_packet()
    first = api.post(CASES_URL, packet, format="json")
    explicit = {**packet, "reason_note": packet["reason_note"], "dedupe_key": None}
    explicit.update(resume_handle=None, proposed_action=None)

    again = api.post(CASES_URL, explicit, format="json")

    assert again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]


def test_default_key_is_instance_checkpoint_and_reason(api):
    packet = invoice_packet()
    first = api.post(CASES_URL, packet, format="json").json()

    other_reason = api.post(CASES_URL, {**packet, "reason_code": "po_closed"}, format="json").json()

    assert other_reason["id"] != first["id"]
    assert Case.objects.count() == 2


def test_same_key_with_a_different_packet_is_409_naming_the_existing_case(api):
    packet = invoice_packet()
    first = api.post(CASES_URL, packet, format="json").json()
    rows = written_rows()

    clash = api.post(CASES_URL, {**packet, "summary": "Something else"}, format="json")

    assert clash.status_code == 409
    body = clash.json()
    assert body["case_id"] == first["id"]
    assert first["id"] in errors_of(clash)["detail"][0]
    assert written_rows() == rows
    assert Case.objects.get(pk=first["id"]).summary == packet["summary"]


def test_explicit_dedupe_key_makes_different_instances_the_same_case(api):
    first = api.post(
        CASES_URL, invoice_packet(dedupe_key="erp:invoice_8421:attempt1"), format="json"
    ).json()
    packet = invoice_packet(dedupe_key="erp:invoice_8421:attempt1")

    clash = api.post(CASES_URL, packet, format="json")

    # Another instance id under the same explicit key is a different packet: a conflict.
    assert clash.status_code == 409
    assert clash.json()["case_id"] == first["id"]
    assert Case.objects.get(pk=first["id"]).dedupe_key == "erp:invoice_8421:attempt1"
