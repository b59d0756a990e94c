"""Bad input of any kind is a 4xx in the shape {"errors": {"field.path": [...]}} and writes
nothing: no case, no evidence, no audit event, no outbox row."""

from __future__ import annotations

import json

import pytest

from tests.conftest import invoice_packet

from .conftest import CASES_URL, case_url, errors_of


def post_raw(api, body: bytes | str, content_type: str = "application/json", url=CASES_URL):
    return api.generic("POST", url, body, content_type=content_type)


def test_private_model_reasoning_is_refused_by_name(api, nothing_written):
    packet = invoice_packet(chain_of_thought="First I considered PO 781...")

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    assert list(errors_of(response)) == ["chain_of_thought"]
    assert "Unknown field" in errors_of(response)["chain_of_thought"][0]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", "exc_mine"),
        ("queue", "finance_approvals"),
        ("severity", "critical"),
        ("priority", {"band": "P1"}),
        ("due_at", "2026-09-01T09:00:00Z"),
        ("allowed_resolutions", ["approve_everything"]),
        ("state", "resolved"),
        ("version", 7),
    ],
)
def test_desk_computed_field_is_refused_saying_the_desk_computes_it(
    api, nothing_written, field, value
):
    response = api.post(CASES_URL, invoice_packet(**{field: value}), format="json")

    assert response.status_code == 400
    errors = errors_of(response)
    assert list(errors) == [field]
    assert "desk computes" in errors[field][0]


def test_unknown_and_invalid_fields_are_reported_together(api, nothing_written):
    packet = invoice_packet(chain_of_thought="...", side_effect_state="maybe")
    del packet["summary"]

    errors = errors_of(api.post(CASES_URL, packet, format="json"))

    assert set(errors) == {"chain_of_thought", "side_effect_state", "summary"}


def test_unknown_key_inside_an_evidence_item_is_refused(api, nothing_written):
    packet = invoice_packet()
    packet["evidence"][1]["model_notes"] = "looks right to me"

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    assert list(errors_of(response)) == ["evidence.1.model_notes"]


@pytest.mark.parametrize(
    ("timestamp", "message"),
    [
        ("2026-08-31T14:19:59", "timezone"),
        ("yesterday afternoon", "format"),
        ("2026-02-30T10:00:00Z", "format"),
        (1756650000, "format"),
    ],
)
def test_naive_or_invalid_evidence_timestamp_is_400_naming_the_item(
    api, nothing_written, timestamp, message
):
    packet = invoice_packet()
    packet["evidence"][1]["source_timestamp"] = timestamp

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    errors = errors_of(response)
    assert list(errors) == ["evidence.1.source_timestamp"]
    assert message in errors["evidence.1.source_timestamp"][0]


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"timeline": "called the ERP"}, "timeline"),
        ({"timeline": ["called the ERP"]}, "timeline.0"),
        ({"evidence": {"ref": "po_781"}}, "evidence"),
        ({"attributes": ["acme-eu"]}, "attributes.non_field_errors"),
        ({"attributes": {"amount": "twelve thousand"}}, "attributes.amount"),
        ({"attributes": {"amount": True}}, "attributes.amount"),
        ({"attributes": {"currency": "euro"}}, "attributes.currency"),
        ({"workflow_version": {"major": 17}}, "workflow_version"),
        ({"side_effect_state": "probably_fine"}, "side_effect_state"),
        ({"case_ref": ""}, "case_ref"),
        ({"summary": "x" * 501}, "summary"),
        ({"workflow_instance_id": "i" * 200, "checkpoint_id": "c" * 200}, "dedupe_key"),
    ],
)
def test_wrong_types_are_400_naming_the_field_path(api, nothing_written, overrides, path):
    response = api.post(CASES_URL, invoice_packet(**overrides), format="json")

    assert response.status_code == 400
    assert list(errors_of(response)) == [path]


def test_evidence_item_content_must_be_an_object(api, nothing_written):
    packet = invoice_packet()
    packet["evidence"][0]["content"] = "PO-781 Acme 12400.00"
    packet["evidence"][1]["classification"] = "top_secret"

    errors = errors_of(api.post(CASES_URL, packet, format="json"))

    assert set(errors) == {"evidence.0.content", "evidence.1.classification"}


def test_missing_required_fields_are_each_named(api, nothing_written):
    response = api.post(CASES_URL, {}, format="json")

    assert response.status_code == 400
    assert set(errors_of(response)) == {
        "workflow_type",
        "workflow_version",
        "workflow_instance_id",
        "checkpoint_id",
        "case_ref",
        "summary",
        "class",
        "reason_code",
    }


@pytest.mark.parametrize(
    "body",
    [b'{"workflow_type": "invoice_match",', b"\xff\xfe not utf-8", b'{"amount": NaN}'],
)
def test_malformed_json_is_400_on_the_body(api, nothing_written, body):
    response = post_raw(api, body)

    assert response.status_code == 400
    assert list(errors_of(response)) == ["body"]


def test_absurdly_nested_json_is_400_on_the_body(api, nothing_written):
    packet = invoice_packet()
    nested: dict = {}
    for _ in range(100):
        nested = {"inner": nested}
    packet["evidence"][0]["content"] = nested

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    assert "nested" in errors_of(response)["body"][0]


def test_a_json_array_is_not_a_packet(api, nothing_written):
    response = post_raw(api, json.dumps([invoice_packet()]))

    assert response.status_code == 400
    assert list(errors_of(response)) == ["non_field_errors"]


def test_body_over_the_limit_is_413(api, settings, nothing_written):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "MAX_BODY_BYTES": 4000}
    packet = invoice_packet(reason_note="n" * 4000)

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 413
    assert "4000" in errors_of(response)["body"][0]


def test_body_just_under_the_limit_is_accepted(api, settings):
    packet = invoice_packet()
    size = len(json.dumps(packet))
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "MAX_BODY_BYTES": size + 10}

    response = post_raw(api, json.dumps(packet))

    assert response.status_code == 201, response.content


def test_evidence_item_over_the_content_limit_is_400_naming_its_content(
    api, settings, nothing_written
):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "MAX_EVIDENCE_ITEM_BYTES": 500}
    packet = invoice_packet()
    packet["evidence"][1]["content"] = {"scan": "x" * 600}

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    errors = errors_of(response)
    assert list(errors) == ["evidence.1.content"]
    assert "500" in errors["evidence.1.content"][0]


def test_more_evidence_items_than_allowed_is_400_naming_evidence(api, settings, nothing_written):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "MAX_EVIDENCE_ITEMS": 3}
    packet = invoice_packet()
    packet["evidence"] = packet["evidence"] * 2

    response = api.post(CASES_URL, packet, format="json")

    assert response.status_code == 400
    assert list(errors_of(response)) == ["evidence"]


def test_wrong_content_type_is_415(api, nothing_written):
    response = post_raw(api, json.dumps(invoice_packet()), content_type="text/plain")

    assert response.status_code == 415
    assert list(errors_of(response)) == ["body"]


def test_form_encoded_body_is_415(api, nothing_written):
    response = api.post(CASES_URL, {"workflow_type": "invoice_match"})

    assert response.status_code == 415
    assert list(errors_of(response)) == ["body"]


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", CASES_URL),
        ("put", case_url("exc_any")),
        ("delete", case_url("exc_any")),
        ("get", case_url("exc_any", "cancel")),
        ("get", "/api/v1/decisions/evt_any/ack"),
        ("post", "/api/v1/decisions"),
    ],
)
def test_wrong_method_is_405_in_the_error_shape(api, method, url):
    response = getattr(api, method)(url)

    assert response.status_code == 405
    assert list(errors_of(response)) == ["detail"]


def test_unknown_api_path_is_a_json_404(api):
    response = api.post("/api/v1/casez", invoice_packet(), format="json")

    assert response.status_code == 404
    assert list(errors_of(response)) == ["detail"]
