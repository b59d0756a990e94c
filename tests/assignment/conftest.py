"""Personas with skills, certifications and capacity for the assignment tests.

`make_worker(...)` builds a worker of one or more queues with a full profile;
`file_case(...)` files a case through the service and then sets the requirements its task
type would have copied (skills, certifications, authority, language, jurisdiction, weight,
classification) the way a recorded reroute would: through the ORM, before anyone sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils.dateparse import parse_datetime
from guardian.shortcuts import assign_perm

from apps.cases.models import Case
from apps.cases.services import file_case
from apps.routing.models import Queue, Skill, WorkerProfile, WorkerSkill
from apps.workflows.models import ApiSource
from tests.conftest import invoice_packet
from tests.delivery.helpers import ensure_roles


def make_worker(
    username: str,
    *,
    queues: Iterable[str] = ("accounts_payable",),
    role: str = "worker",
    skills: dict[str, int] | None = None,
    certifications: Iterable[str] = (),
    languages: Iterable[str] = (),
    jurisdictions: Iterable[str] = (),
    amount_limit: str = "0",
    clearance: str = "internal",
    capacity: int = 10,
    on_shift: bool = True,
    supervise: Iterable[str] = (),
    **profile_fields: Any,
) -> User:
    ensure_roles()
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.groups.add(Group.objects.get(name=role))
    profile = WorkerProfile.objects.create(
        user=user,
        clearance=clearance,
        amount_limit=Decimal(amount_limit),
        certifications=list(certifications),
        languages=list(languages),
        jurisdictions=list(jurisdictions),
        capacity=capacity,
        on_shift=on_shift,
        **profile_fields,
    )
    for code, proficiency in (skills or {}).items():
        skill, _ = Skill.objects.get_or_create(code=code, defaults={"name": code.title()})
        WorkerSkill.objects.create(profile=profile, skill=skill, proficiency=proficiency)
    for name in queues:
        queue = Queue.objects.get(name=name)
        assign_perm("routing.view_queue", user, queue)
        assign_perm("routing.work_queue", user, queue)
    for name in supervise:
        queue = Queue.objects.get(name=name)
        for perm in ("view_queue", "work_queue", "supervise_queue"):
            assign_perm(f"routing.{perm}", user, queue)
    return user


@pytest.fixture
def worker_factory(reference_data: None) -> Callable[..., User]:
    return make_worker


@pytest.fixture
def lead(reference_data: None) -> User:
    """Supervisor of accounts_payable only (and a worker there)."""
    return make_worker(
        "lena",
        role="supervisor",
        queues=(),
        supervise=("accounts_payable",),
        clearance="restricted",
    )


REQUIREMENT_FIELDS = {
    "required_skills",
    "required_certifications",
    "required_language",
    "required_jurisdiction",
    "authority_amount",
    "workload_weight",
    "data_classification",
}


def set_requirements(case: Case, **requirements: Any) -> Case:
    unknown = set(requirements) - REQUIREMENT_FIELDS
    assert not unknown, unknown
    if "required_skills" in requirements and isinstance(requirements["required_skills"], dict):
        requirements["required_skills"] = [
            {"code": code, "min_proficiency": level}
            for code, level in requirements["required_skills"].items()
        ]
    Case.objects.filter(pk=case.pk).update(**requirements)
    case.refresh_from_db()
    return case


@pytest.fixture
def file_case_with(api_source: tuple[ApiSource, str]) -> Callable[..., Case]:
    """File an invoice case; keyword arguments named like Case requirement fields are set on
    it after filing, the rest override the packet. `queue=` moves it to another queue and
    `priority_band=`, `due_at=`, `created_at=` pin its ordering."""

    def _file(**overrides: Any) -> Case:
        requirements = {k: overrides.pop(k) for k in list(overrides) if k in REQUIREMENT_FIELDS}
        placement: dict[str, Any] = {}
        if "queue" in overrides:
            placement["queue"] = Queue.objects.get(name=overrides.pop("queue"))
        for key in ("priority_band", "due_at", "created_at", "original_due_at"):
            if key in overrides:
                placement[key] = overrides.pop(key)
        packet = invoice_packet(**overrides)
        for item in packet["evidence"]:
            item["source_timestamp"] = parse_datetime(item["source_timestamp"])
        case, _ = file_case(source=api_source[0], packet=packet)
        if placement:
            if "due_at" in placement and "original_due_at" not in placement:
                placement["original_due_at"] = placement["due_at"]
            Case.objects.filter(pk=case.pk).update(**placement)
            case.refresh_from_db()
        return set_requirements(case, **requirements) if requirements else case

    return _file


def at(value: str) -> datetime:
    parsed = parse_datetime(value)
    assert parsed is not None
    return parsed


def make_task_type(
    *,
    workflow_type: str = "invoice_match",
    exception_class: str = "evidence_conflict",
    skills: dict[str, int] | None = None,
    **fields: Any,
) -> Any:
    """Configure what a task type requires; filing copies it onto new cases."""
    from apps.routing.models import ExceptionClass, TaskType, TaskTypeSkill
    from apps.workflows.models import WorkflowType

    task_type, _ = TaskType.objects.update_or_create(
        workflow_type=WorkflowType.objects.get(name=workflow_type),
        exception_class=ExceptionClass.objects.get(code=exception_class),
        defaults=fields,
    )
    TaskTypeSkill.objects.filter(task_type=task_type).delete()
    for code, level in (skills or {}).items():
        skill, _ = Skill.objects.get_or_create(code=code, defaults={"name": code.title()})
        TaskTypeSkill.objects.create(task_type=task_type, skill=skill, min_proficiency=level)
    return task_type
