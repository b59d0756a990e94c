"""Fixtures for the routing tests: a source that may file every demo workflow type and a
helper that files a packet through the service at a chosen instant."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import time_machine
from django.utils.dateparse import parse_datetime

from apps.audit.services import Actor
from apps.cases.models import Case
from apps.cases.services import file_case
from apps.workflows.models import ApiSource, WorkflowType
from apps.workflows.services import create_api_key
from tests.conftest import invoice_packet


@pytest.fixture
def every_workflow_source(reference_data: None) -> ApiSource:
    """A source allowed to file every workflow type the reference tests set up, plus an
    onboarding workflow that no routing rule mentions (it lands in triage)."""
    WorkflowType.objects.get_or_create(
        name="vendor_onboarding",
        defaults={"display_name": "Vendor onboarding", "supported_versions": ["1"]},
    )
    key, _ = create_api_key(
        source_name="every-workflow",
        workflow_type_names=[
            "invoice_match",
            "refund_approval",
            "support_account_change",
            "vendor_onboarding",
        ],
        is_test=False,
        acting=Actor.system("tests"),
    )
    return key.source


@pytest.fixture
def file_packet(every_workflow_source: ApiSource) -> Callable[..., Case]:
    """File the seed invoice packet with overrides; `at=` files it at that instant and
    `attributes=` replaces the attributes entirely."""

    def _file(*, at: datetime | None = None, **overrides: Any) -> Case:
        packet = invoice_packet(**overrides)
        for item in packet["evidence"]:
            item["source_timestamp"] = parse_datetime(item["source_timestamp"])
        if at is None:
            return file_case(source=every_workflow_source, packet=packet)[0]
        with time_machine.travel(at, tick=False):
            return file_case(source=every_workflow_source, packet=packet)[0]

    return _file
