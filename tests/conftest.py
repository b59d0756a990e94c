"""Personas and factories shared by every test module.

Personas (all in the accounts_payable scope unless said otherwise):
  worker      - worker role; view+work on accounts_payable; internal clearance
  worker2     - a second worker on the same queue
  viewer      - auditor role; view_queue on accounts_payable only (may see, may not act)
  outsider    - worker role on security_review only (accounts_payable is out of scope)
  supervisor  - supervisor role; view+work+supervise on every queue; restricted clearance
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from guardian.shortcuts import assign_perm

from apps.audit.services import Actor
from apps.cases.models import Case
from apps.cases.services import claim_case, file_case
from apps.routing.models import Queue, WorkerProfile
from apps.routing.reference import ensure_reference_data
from apps.workflows.models import ApiSource, WorkflowType
from apps.workflows.services import create_api_key
from tests.packets import invoice_packet


@pytest.fixture
def reference_data(db: Any) -> None:
    ensure_reference_data()
    WorkflowType.objects.get_or_create(
        name="invoice_match",
        defaults={"display_name": "Invoice matching", "supported_versions": ["16", "17"]},
    )
    WorkflowType.objects.get_or_create(
        name="refund_approval",
        defaults={"display_name": "Refund approval", "supported_versions": ["3"]},
    )
    WorkflowType.objects.get_or_create(
        name="support_account_change",
        defaults={"display_name": "Support account change", "supported_versions": ["1"]},
    )


def make_user(
    username: str, *, role: str, queues: dict[str, list[str]], clearance: str = "internal"
) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.groups.add(Group.objects.get(name=role))
    WorkerProfile.objects.create(user=user, clearance=clearance)
    for queue_name, perms in queues.items():
        queue = Queue.objects.get(name=queue_name)
        for perm in perms:
            assign_perm(f"routing.{perm}", user, queue)
    return user


@pytest.fixture
def worker(reference_data: None) -> User:
    return make_user(
        "wendy", role="worker", queues={"accounts_payable": ["view_queue", "work_queue"]}
    )


@pytest.fixture
def worker2(reference_data: None) -> User:
    return make_user(
        "walter", role="worker", queues={"accounts_payable": ["view_queue", "work_queue"]}
    )


@pytest.fixture
def viewer(reference_data: None) -> User:
    return make_user("vera", role="auditor", queues={"accounts_payable": ["view_queue"]})


@pytest.fixture
def outsider(reference_data: None) -> User:
    return make_user(
        "oscar", role="worker", queues={"security_review": ["view_queue", "work_queue"]}
    )


@pytest.fixture
def supervisor(reference_data: None) -> User:
    all_perms = ["view_queue", "work_queue", "supervise_queue"]
    return make_user(
        "sam",
        role="supervisor",
        clearance="restricted",
        queues={q.name: all_perms for q in Queue.objects.all()},
    )


@pytest.fixture
def api_source(reference_data: None) -> tuple[ApiSource, str]:
    """A source allowed to file invoice_match and refund_approval; returns (source, key)."""
    key, plain = create_api_key(
        source_name="erp-workflows",
        workflow_type_names=["invoice_match", "refund_approval"],
        is_test=False,
        acting=Actor.system("tests"),
    )
    return key.source, plain


@pytest.fixture
def file_invoice_case(api_source: tuple[ApiSource, str]) -> Callable[..., Case]:
    """File a case through the service (the API tests file through HTTP)."""
    from django.utils.dateparse import parse_datetime

    def _file(**overrides: Any) -> Case:
        packet = invoice_packet(**overrides)
        for item in packet["evidence"]:
            item["source_timestamp"] = parse_datetime(item["source_timestamp"])
        case, _ = file_case(source=api_source[0], packet=packet)
        return case

    return _file


@pytest.fixture
def claimed_case(file_invoice_case: Callable[..., Case], worker: User) -> Case:
    case = file_invoice_case()
    return claim_case(case_id=case.pk, actor=worker)
