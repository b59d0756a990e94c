"""Who may call the API: a Bearer key, scoped to workflow types."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.audit.models import AuditEvent
from apps.audit.services import Actor
from apps.workflows.models import ApiKey, ApiSource
from apps.workflows.services import revoke_api_key
from tests.conftest import invoice_packet

from .conftest import CASES_URL, case_url, client_with_key, errors_of, written_rows


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("post", CASES_URL),
        ("get", case_url("exc_any")),
        ("post", case_url("exc_any", "evidence")),
        ("post", case_url("exc_any", "side-effect")),
        ("post", case_url("exc_any", "cancel")),
        ("get", "/api/v1/decisions"),
        ("post", "/api/v1/decisions/evt_any/ack"),
    ],
)
def test_no_key_is_401_on_every_endpoint(reference_data, method, url):
    response = getattr(client_with_key(None), method)(url, {}, format="json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert list(errors_of(response)) == ["detail"]


@pytest.mark.parametrize(
    "header",
    ["Bearer edk_000000000000_not-a-real-key", "Bearer not-even-our-format", "Token abc", "Bearer"],
)
def test_bad_key_is_401_and_writes_nothing(api_source, header):
    client = client_with_key(None)
    client.credentials(HTTP_AUTHORIZATION=header)
    before = written_rows()

    response = client.post(CASES_URL, invoice_packet(), format="json")

    assert response.status_code == 401
    assert written_rows() == before


def test_revoked_key_is_401(api, api_source):
    source, plain = api_source
    revoke_api_key(key=source.keys.get(), acting=Actor.system("tests"))

    response = client_with_key(plain).get("/api/v1/decisions")

    assert response.status_code == 401


def test_filing_a_workflow_type_outside_the_key_scope_is_403(support_api, nothing_written):
    response = support_api.post(CASES_URL, invoice_packet(), format="json")

    assert response.status_code == 403
    assert "invoice_match" in errors_of(response)["detail"][0]


def test_reading_a_case_of_another_workflow_type_is_the_same_404_as_a_missing_case(
    filed, support_api
):
    created = filed()

    foreign = support_api.get(case_url(created["id"]))
    missing = support_api.get(case_url("exc_doesnotexist"))

    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("evidence", {"evidence": invoice_packet()["evidence"]}),
        ("side-effect", {"state": "confirmed_applied", "provider_record": {"id": "pay_1"}}),
        ("cancel", {"reason": "not mine"}),
    ],
)
def test_changing_a_case_of_another_workflow_type_is_404_and_changes_nothing(
    filed, support_api, action, body
):
    created = filed()
    before = written_rows()

    response = support_api.post(case_url(created["id"], action), body, format="json")

    assert response.status_code == 404
    assert written_rows() == before


def test_create_api_key_prints_the_key_once_and_stores_only_its_hash(reference_data):
    import hashlib

    out = StringIO()

    call_command(
        "create_api_key",
        "--source",
        "stepfunctions-prod",
        "--workflow-types",
        "invoice_match,refund_approval",
        stdout=out,
    )

    plain = out.getvalue().strip()
    assert plain.count("\n") == 0 and plain.startswith("edk_")
    key = ApiKey.objects.get(source__name="stepfunctions-prod")
    assert key.key_hash != plain
    assert key.key_hash == hashlib.sha256(plain.encode()).hexdigest()
    assert plain not in str(list(ApiKey.objects.values()))
    assert plain not in str(list(AuditEvent.objects.values()))
    source = ApiSource.objects.get(name="stepfunctions-prod")
    assert sorted(source.workflow_types.values_list("name", flat=True)) == [
        "invoice_match",
        "refund_approval",
    ]
    response = client_with_key(plain).post(CASES_URL, invoice_packet(), format="json")
    assert response.status_code == 201
