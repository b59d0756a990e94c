"""Helpers for the supervisor board, notification and assignment page tests: the page
helpers of tests/pages, a second supervised queue's case, and a case aged to a breach."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from apps.cases.models import Case
from apps.cases.services import file_case
from apps.workflows.models import ApiSource, WorkflowType
from tests.conftest import invoice_packet
from tests.pages.conftest import (  # noqa: F401  (fixtures re-exported for this directory)
    client_for,
    failed_delivery_case,
    small_delivery_budget,
)

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def security_case(reference_data: None) -> Callable[..., Case]:
    """File a case into security_review: the outsider's queue, outside the worker's scope."""
    source, _ = ApiSource.objects.get_or_create(name="support-bot")
    source.workflow_types.add(WorkflowType.objects.get(name="support_account_change"))

    def _file(**overrides: Any) -> Case:
        packet = invoice_packet(
            workflow_type="support_account_change",
            workflow_version="1",
            summary="Email change on a locked account",
            evidence=[],
            **{"class": "policy_denied"},
        )
        packet.update(overrides)
        case, _ = file_case(source=source, packet=packet)
        assert case.queue.name == "security_review"
        return case

    return _file


def set_times(case: Case, *, created_at: datetime, due_at: datetime, **fields: Any) -> Case:
    """Age a filed case: the board reads times, and filing stamps "now". A test-only write
    of facts (no service moves a case back in time)."""
    Case.objects.filter(pk=case.pk).update(
        created_at=created_at, due_at=due_at, original_due_at=due_at, **fields
    )
    case.refresh_from_db()
    return case


@pytest.fixture
def aged() -> Callable[..., Case]:
    def _aged(case: Case, *, age: timedelta, due_in: timedelta, **fields: Any) -> Case:
        now = timezone.now()
        return set_times(case, created_at=now - age, due_at=now + due_in, **fields)

    return _aged


@pytest.fixture
def lead(reference_data: None) -> User:
    """A supervisor of accounts_payable only (the shared `supervisor` supervises all)."""
    from tests.conftest import make_user

    return make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )


class _Rows(HTMLParser):
    """The text of each table cell (th and td) of the rows that have an id."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self._row: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self._row = dict(attrs).get("id")
            if self._row:
                self.rows[self._row] = []
        elif tag in {"td", "th"} and self._row:
            self._cell = []
        elif self._cell is not None and (
            tag in {"li", "br"} or "secondary" in (dict(attrs).get("class") or "")
        ):
            self._cell.append(" ")  # a line of its own on the page

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._row and self._cell is not None:
            self.rows[self._row].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(page: str) -> dict[str, list[str]]:
    parser = _Rows()
    parser.feed(page)
    return parser.rows


def poll_values(page: str, region: str) -> dict[str, Any]:
    match = re.search(rf'id="{region}"[^>]*hx-vals="([^"]*)"', page, re.S)
    assert match, f"the region {region} carries no poll values"
    return json.loads(html.unescape(match.group(1)))


def announced(response: Any) -> str:
    trigger = response.get("HX-Trigger")
    return json.loads(trigger)["announce"]["message"] if trigger else ""
