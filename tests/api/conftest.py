"""Clients and helpers for the API tests. Packets come from tests/conftest.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.audit.services import Actor
from apps.cases.models import Case, EvidenceItem, OutboxEvent
from apps.workflows.models import ApiSource
from apps.workflows.services import create_api_key

CASES_URL = "/api/v1/cases"


def client_with_key(key: str | None) -> APIClient:
    client = APIClient()
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def api(api_source: tuple[ApiSource, str]) -> APIClient:
    """The ERP workflow source: may file invoice_match and refund_approval."""
    return client_with_key(api_source[1])


@pytest.fixture
def support_source(reference_data: None) -> tuple[ApiSource, str]:
    """Another source, scoped to support_account_change only."""
    key, plain = create_api_key(
        source_name="support-bot",
        workflow_type_names=["support_account_change"],
        is_test=False,
        acting=Actor.system("tests"),
    )
    return key.source, plain


@pytest.fixture
def support_api(support_source: tuple[ApiSource, str]) -> APIClient:
    return client_with_key(support_source[1])


def written_rows() -> dict[str, int]:
    """What a rejected request must leave untouched."""
    return {
        "cases": Case.objects.count(),
        "evidence": EvidenceItem.objects.count(),
        "audit": AuditEvent.objects.count(),
        "outbox": OutboxEvent.objects.count(),
    }


@pytest.fixture
def nothing_written() -> Any:
    """Asserts after the test that the rejected request left every table as it was."""
    before = written_rows()
    yield
    assert written_rows() == before


def case_url(case_id: str, action: str = "") -> str:
    return f"{CASES_URL}/{case_id}" + (f"/{action}" if action else "")


def errors_of(response: Any) -> dict[str, list[str]]:
    body = response.json()
    assert set(body) >= {"errors"}, body
    return body["errors"]


def audit_actions(case_id: str) -> list[str]:
    return list(
        AuditEvent.objects.filter(stream=case_id)
        .order_by("sequence")
        .values_list("action", flat=True)
    )


@pytest.fixture
def filed(api: APIClient) -> Any:
    """File an invoice packet through the API; returns the response body of the 201."""
    from tests.conftest import invoice_packet

    def _file(**overrides: Any) -> dict[str, Any]:
        response = api.post(CASES_URL, invoice_packet(**overrides), format="json")
        assert response.status_code == 201, response.content
        return response.json()

    return _file


def decide(case_id: str, worker: User, resolution: str = "select_po") -> None:
    """A worker claims and decides the case through the services (not under test here)."""
    import uuid

    from apps.cases.services import claim_case, decide_case

    case = claim_case(case_id=case_id, actor=worker)
    decide_case(
        case_id=case.pk,
        actor=worker,
        expected_version=case.version,
        lease_token=case.lease_token,
        resolution=resolution,
        fields={"po_number": "po_781"},
        note="",
        resolution_id=str(uuid.uuid4()),
        evidence_digest=case.evidence_digest,
    )
