"""Helpers for the page tests: logged-in clients, decision form payloads, and a case whose
delivery failed (the recovery queue's input)."""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.cases.models import Case, OutboxEvent, State
from apps.cases.services import claim_case, decide_case
from apps.cases.services.delivery import _record_attempt

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def client_for() -> Callable[[User | None], Client]:
    """A separate browser per persona; None is the anonymous visitor."""

    def _client(user: User | None) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return _client


def decision_payload(
    case: Case,
    *,
    resolution: str = "select_po",
    fields: dict[str, str] | None = None,
    note: str = "",
    resolution_id: str | None = None,
    confirm: bool = False,
    expected_version: int | None = None,
) -> dict[str, str]:
    """What the decision form posts: hidden concurrency fields as rendered, the chosen
    resolution, and its fields under their per-resolution input names."""
    if fields is None:
        fields = {"po_number": "po_781"} if resolution == "select_po" else {}
    data = {
        "expected_version": str(expected_version or case.version),
        "lease_token": case.lease_token,
        "evidence_digest": case.evidence_digest,
        "resolution_id": resolution_id or str(uuid.uuid4()),
        "resolution": resolution,
        "note": note,
    }
    for name, value in fields.items():
        data[f"field-{resolution}-{name}"] = value
    if confirm:
        data["confirm"] = "1"
    return data


def hidden_value(page: str, name: str) -> str:
    match = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', page)
    assert match, f"no hidden input {name} in the page"
    return html.unescape(match.group(1))


def poll_values(page: str) -> dict[str, str]:
    match = re.search(r'id="queue-table"[^>]*hx-vals="([^"]*)"', page, re.S)
    assert match, "the queue region carries no poll values"
    return json.loads(html.unescape(match.group(1)))


@pytest.fixture
def small_delivery_budget(settings: Any) -> int:
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "DELIVERY_MAX_ATTEMPTS": 2}
    return 2


@pytest.fixture
def failed_delivery_case(
    file_invoice_case: Callable[..., Case], small_delivery_budget: int
) -> Callable[[User], Case]:
    """A case decided by `decider` whose webhook failed until the retry budget ran out."""

    def _make(decider: User) -> Case:
        case = claim_case(case_id=file_invoice_case().pk, actor=decider)
        decide_case(
            case_id=case.pk,
            actor=decider,
            expected_version=case.version,
            lease_token=case.lease_token,
            resolution="select_po",
            fields={"po_number": "po_781"},
            note="",
            resolution_id=str(uuid.uuid4()),
            evidence_digest=case.evidence_digest,
        )
        event = OutboxEvent.objects.get(case=case, type="case.decided")
        outcome = ""
        for _ in range(small_delivery_budget + 1):
            outcome = _record_attempt(event.pk, 503, "HTTP 503", 5)
            if outcome == "failed":
                break
        assert outcome == "failed"
        case.refresh_from_db()
        assert case.state == State.RESOLUTION_PENDING
        return case

    return _make
