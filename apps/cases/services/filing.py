"""Verbs the workflow calls through the API: file, append evidence, report a side effect,
cancel."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record, sha256_hex
from apps.routing.models import (
    CLASSIFICATION_RANK,
    PLATFORM_QUEUE,
    TRIAGE_QUEUE,
    Classification,
    ExceptionClass,
    Queue,
    RoutingRule,
    TaskType,
)
from apps.routing.policy import (
    CalendarSpec,
    RoutingDecision,
    classify,
    compute_severity,
    due_at,
    task_type_key,
)
from apps.workflows.models import ApiSource, WorkflowType

from ..errors import CaseError
from ..models import Case, CloseReason, SideEffectState, State
from .alerts import raise_if_no_eligible_worker
from .common import add_evidence, case_evidence_digest, evidence_item_digest, refresh_priority
from .transitions import clear_lease, commit_change, move, snapshot


def dedupe_key_for(packet: dict[str, Any]) -> str:
    if packet.get("dedupe_key"):
        return str(packet["dedupe_key"])
    return "|".join(
        [
            packet["workflow_type"],
            packet["workflow_instance_id"],
            packet["checkpoint_id"],
            packet["reason_code"],
        ]
    )


@dataclass(frozen=True)
class Requirements:
    """What the case's task type asks of whoever decides it, copied onto the case."""

    task_type: str  # "workflow_type/class", or "" when no task type is configured
    skills: list[dict[str, Any]]
    certifications: list[str]
    language: str
    jurisdiction: str
    authority_amount: Decimal | None
    workload_weight: int
    data_classification: str


def _requirements(
    packet: dict[str, Any], workflow_type: WorkflowType, exception_class: ExceptionClass
) -> Requirements:
    """Copy the task type's requirements; no task type means weight 1 and no skills.

    The data classification is the more sensitive of the task type's and the filed
    evidence's, so the case never claims to be less sensitive than what it holds.
    "@region" in a task type's jurisdiction takes the case's region; a case without a
    region keeps "@region", which no worker holds: it waits for a supervisor rather than
    going to someone of the wrong jurisdiction.
    """
    attributes = packet.get("attributes") or {}
    task_type = (
        TaskType.objects.filter(workflow_type=workflow_type, exception_class=exception_class)
        .prefetch_related("tasktypeskill_set__skill")
        .first()
    )
    evidence_levels = [str(item.get("classification")) for item in packet.get("evidence") or []]
    if task_type is None:
        return Requirements(
            task_type="",
            skills=[],
            certifications=[],
            language="",
            jurisdiction="",
            authority_amount=None,
            workload_weight=1,
            data_classification=_most_sensitive([Classification.INTERNAL, *evidence_levels]),
        )
    jurisdiction = task_type.jurisdiction
    if jurisdiction == "@region" and attributes.get("region"):
        jurisdiction = str(attributes["region"])
    return Requirements(
        task_type=task_type_key(workflow_type.name, exception_class.code),
        skills=[
            {"code": link.skill.code, "min_proficiency": link.min_proficiency}
            for link in sorted(task_type.tasktypeskill_set.all(), key=lambda x: x.skill.code)
        ],
        certifications=list(task_type.certifications or []),
        language=task_type.language,
        jurisdiction=jurisdiction[:32],
        authority_amount=_decimal(attributes.get("amount"))
        if task_type.authority_by_amount
        else None,
        workload_weight=task_type.workload_weight,
        data_classification=_most_sensitive([task_type.data_classification, *evidence_levels]),
    )


def _most_sensitive(levels: list[str]) -> str:
    known = [level for level in levels if level in CLASSIFICATION_RANK]
    return max(known, key=lambda level: CLASSIFICATION_RANK[level])


def _decimal(value: Any) -> Decimal | None:
    try:
        return None if value in (None, "") else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _route(
    packet: dict[str, Any], exception_class: ExceptionClass, severity: str
) -> tuple[Queue, RoutingDecision]:
    """Stage one, classification: the first matching rule over trusted metadata picks the
    queue (the summary and notes a model wrote are never consulted)."""
    attributes = packet.get("attributes") or {}
    facts = {
        "workflow_type": packet["workflow_type"],
        "exception_class": exception_class.code,
        "task_type": task_type_key(packet["workflow_type"], exception_class.code),
        "tenant": attributes.get("tenant"),
        "region": attributes.get("region"),
        "severity": severity,
        "amount": attributes.get("amount"),
    }
    rules = [
        {
            **rule.as_policy_rule(),
            "queue_accepts": [
                task_type_key(accepted.workflow_type.name, accepted.exception_class.code)
                for accepted in rule.queue.accepted_task_types.all()
            ],
        }
        for rule in RoutingRule.objects.filter(active=True)
        .select_related("queue")
        .prefetch_related(
            "queue__accepted_task_types__workflow_type",
            "queue__accepted_task_types__exception_class",
        )
    ]
    decision = classify(facts, rules, fallback_queue=TRIAGE_QUEUE)
    queue = Queue.objects.select_related("calendar").filter(name=decision.queue).first()
    if queue is None:
        decision = replace(
            decision,
            queue=TRIAGE_QUEUE,
            explanation=f"{decision.explanation}; queue {decision.queue} missing: triage",
        )
        queue = Queue.objects.select_related("calendar").get(name=TRIAGE_QUEUE)
    return queue, decision


def file_case(*, source: ApiSource, packet: dict[str, Any]) -> tuple[Case, bool]:
    """Create the case for a review packet, or return the one already filed for its key.

    Returns (case, created). Idempotent by dedupe key, enforced by a unique constraint so
    identical requests racing each other still make one case: the loser's insert fails
    and it reads the winner's row. The same key with a different packet is a conflict.
    """
    workflow_type = WorkflowType.objects.filter(name=packet["workflow_type"]).first()
    if workflow_type is None:
        raise CaseError.invalid(
            "workflow_type",
            _("Unknown workflow type '%(name)s'.") % {"name": packet["workflow_type"]},
        )
    if not source.workflow_types.filter(pk=workflow_type.pk).exists():
        raise CaseError(
            "forbidden",
            _("This API key may not file '%(name)s' cases.") % {"name": workflow_type.name},
        )
    exception_class = ExceptionClass.objects.filter(code=packet["class"]).first()
    if exception_class is None:
        raise CaseError.invalid(
            "class", _("Unknown exception class '%(code)s'.") % {"code": packet["class"]}
        )

    key = dedupe_key_for(packet)
    digest = sha256_hex({k: v for k, v in packet.items() if k != "dedupe_key"})
    existing = Case.objects.filter(dedupe_key=key).first()
    if existing is None:
        try:
            return _create(source, packet, workflow_type, exception_class, key, digest), True
        except IntegrityError:
            existing = Case.objects.filter(dedupe_key=key).first()
            if existing is None:
                raise
    if existing.packet_digest != digest:
        raise CaseError(
            "conflict",
            _("Dedupe key already used by case %(case)s with a different packet.")
            % {"case": existing.pk},
            case=existing,
        )
    return existing, False


def _create(
    source: ApiSource,
    packet: dict[str, Any],
    workflow_type: WorkflowType,
    exception_class: ExceptionClass,
    key: str,
    digest: str,
) -> Case:
    now = timezone.now()
    attributes = packet.get("attributes") or {}
    severity = compute_severity(
        class_default=exception_class.default_severity, attributes=attributes
    )
    requirements = _requirements(packet, workflow_type, exception_class)
    if workflow_type.supports(packet["workflow_version"]):
        queue, decision = _route(packet, exception_class, severity.level)
        why = decision.explanation
        state = State.OPEN
    else:
        # Release case 9: a checkpoint of a version this desk cannot read is parked for the
        # platform team, never offered to a worker who would decide on a misread packet.
        queue = Queue.objects.select_related("calendar").get(name=PLATFORM_QUEUE)
        why = (
            f"workflow version {packet['workflow_version']} not in supported "
            f"{workflow_type.supported_versions}: quarantined"
        )
        decision = RoutingDecision(queue=queue.name, rule_id=None, explanation=why)
        state = State.QUARANTINED
    # The service target runs on the queue's business calendar (none: around the clock).
    target = queue.service_target_minutes or exception_class.service_target_minutes
    due = due_at(now, target, CalendarSpec.of(queue.calendar))
    evidence = packet.get("evidence") or []
    item_digests = [evidence_item_digest(item) for item in evidence]
    case = Case(
        dedupe_key=key,
        packet_digest=digest,
        source=source,
        is_test=source.is_test,
        workflow_type=workflow_type,
        workflow_version=packet["workflow_version"],
        workflow_instance_id=packet["workflow_instance_id"],
        checkpoint_id=packet["checkpoint_id"],
        resume_handle=packet.get("resume_handle") or "",
        case_ref=packet["case_ref"],
        summary=packet["summary"],
        exception_class=exception_class,
        reason_code=packet["reason_code"],
        reason_note=packet.get("reason_note") or "",
        proposed_action=packet.get("proposed_action"),
        policy_version=packet.get("policy_version") or "",
        policy_decision_ref=packet.get("policy_decision_ref") or "",
        trace_ref=packet.get("trace_ref") or "",
        input_snapshot_ref=packet.get("input_snapshot_ref") or "",
        timeline=packet.get("timeline") or [],
        attributes=packet.get("attributes") or {},
        created_at=now,
        queue=queue,
        routing_explanation=why[:300],
        routing_rule_id=decision.rule_id,
        routing_rule_version=decision.rule_version,
        routing_policy_version=decision.policy_version,
        required_skills=requirements.skills,
        required_certifications=requirements.certifications,
        required_language=requirements.language,
        required_jurisdiction=requirements.jurisdiction,
        authority_amount=requirements.authority_amount,
        workload_weight=requirements.workload_weight,
        data_classification=requirements.data_classification,
        state=state,
        severity=severity.level,
        severity_inputs=severity.inputs,
        severity_explanation=severity.explanation,
        severity_policy_version=severity.policy_version,
        due_at=due,
        original_due_at=due,
        side_effect_state=packet.get("side_effect_state") or SideEffectState.NONE_ATTEMPTED,
        evidence_version=1,
        evidence_digest=case_evidence_digest(item_digests),
    )
    refresh_priority(case, now=now)
    with transaction.atomic(durable=True):
        case.save(force_insert=True)
        add_evidence(case, evidence, version=1, added_by=f"source:{source.name}", at=now)
        record(
            stream=case.pk,
            actor=Actor.source(source),
            action="case.filed",
            after={
                **snapshot(case),
                "routing": why,
                "routing_rule": [decision.rule_id, decision.rule_version],
                "routing_policy_version": decision.policy_version,
                "task_type": requirements.task_type,
                "severity": severity.level,
                "severity_explanation": severity.explanation,
                "priority_explanation": case.priority_explanation,
                "dedupe_key": key,
                "packet_digest": digest,
            },
            at=now,
        )
    # Issue 3 (assignment): nobody on shift able to take it -> capacity alert at once.
    raise_if_no_eligible_worker(case=case)
    return case


def _locked_case_for_source(source: ApiSource, case_id: str) -> Case:
    case = (
        Case.objects.select_for_update(of=("self",))
        .select_related("queue", "assignee", "workflow_type")
        .filter(pk=case_id, workflow_type__in=source.workflow_types.all())
        .first()
    )
    if case is None:
        raise CaseError("not_found", _("No such case."))
    return case


def append_evidence(*, source: ApiSource, case_id: str, items: list[dict[str, Any]]) -> Case:
    """Add a new evidence version. A waiting case returns to open: its question is answered."""
    with transaction.atomic(durable=True):
        case = _locked_case_for_source(source, case_id)
        if case.state not in {State.OPEN, State.CLAIMED, State.WAITING, State.QUARANTINED}:
            raise CaseError(
                "conflict",
                _("Evidence cannot be added to a %(state)s case.") % {"state": case.state},
                case=case,
            )
        before = snapshot(case)
        now = timezone.now()
        case.evidence_version += 1
        add_evidence(
            case, items, version=case.evidence_version, added_by=f"source:{source.name}", at=now
        )
        digests = list(
            case.evidence.order_by("version", "position").values_list("digest", flat=True)
        )
        case.evidence_digest = case_evidence_digest(digests)
        if case.state == State.WAITING:
            move(case, State.OPEN)
            case.waiting_on = {}
        return commit_change(
            case,
            actor=Actor.source(source),
            action="case.evidence_added",
            before=before,
            extra={"items": [item["ref"] for item in items]},
        )


def report_side_effect(
    *, source: ApiSource, case_id: str, state: str, provider_record: dict[str, Any]
) -> Case:
    if state not in {SideEffectState.CONFIRMED_APPLIED, SideEffectState.CONFIRMED_REJECTED}:
        raise CaseError.invalid("state", _("Report confirmed_applied or confirmed_rejected."))
    with transaction.atomic(durable=True):
        case = _locked_case_for_source(source, case_id)
        before = snapshot(case)
        case.side_effect_state = state
        case.side_effect_record = {"reported_by": f"source:{source.name}", **provider_record}
        return commit_change(
            case,
            actor=Actor.source(source),
            action="case.side_effect_reconciled",
            before=before,
            extra={"provider_record": sha256_hex(provider_record)},
        )


def cancel_case(*, source: ApiSource, case_id: str, reason: str = "") -> Case:
    with transaction.atomic(durable=True):
        case = _locked_case_for_source(source, case_id)
        if case.state == State.CLOSED:
            return case  # canceling twice is harmless
        if hasattr(case, "decision") or case.state in {State.RESOLUTION_PENDING, State.RESOLVED}:
            raise CaseError(
                "conflict", _("The case is already decided; it cannot be canceled."), case=case
            )
        before = snapshot(case)
        move(case, State.CLOSED)
        case.close_reason = CloseReason.CANCELED_BY_WORKFLOW
        case.assignee = None
        clear_lease(case)
        return commit_change(
            case, actor=Actor.source(source), action="case.canceled", before=before, reason=reason
        )
