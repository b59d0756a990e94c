"""Deciding a case, and the work around a decision: drafts, information requests,
side-effect reconciliation."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, sha256_hex
from apps.routing.models import Outcome, Resolution

from ..access import access_case, in_group, require_eligible, require_work
from ..errors import CaseError
from ..models import (
    Case,
    Decision,
    DeliveryStatus,
    Draft,
    OutboxEvent,
    SideEffectState,
    State,
)
from .delivery import enqueue_after_commit, event_body
from .leases import _require_live_lease
from .transitions import clear_lease, commit_change, move, snapshot

DECISION_POLICY_VERSION = "decision-2026.1"


def allowed_resolutions(case: Case) -> list[Resolution]:
    """The class's resolutions, minus every retry-like one while the side effect is unknown
    (release case 5: no blind retry of a write that may already have happened)."""
    resolutions = list(case.exception_class.resolutions.all())
    if case.side_effect_state == SideEffectState.UNKNOWN:
        resolutions = [r for r in resolutions if not r.retry_like]
    return resolutions


def _validate_fields(
    resolution: Resolution, fields: dict[str, Any], *, evidence_refs: set[str] | None = None
) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    schema = {spec["name"]: spec for spec in resolution.field_schema}
    clean: dict[str, Any] = {}
    for name in fields:
        if name not in schema:
            errors[f"fields.{name}"] = [
                _("'%(name)s' is not a field of %(resolution)s.")
                % {"name": name, "resolution": resolution.code}
            ]
    for name, spec in schema.items():
        raw = fields.get(name)
        label = spec.get("label", name)
        if raw in (None, ""):
            if spec.get("required"):
                errors[f"fields.{name}"] = [_("%(label)s is required.") % {"label": label}]
            continue
        kind = spec.get("type", "string")
        if kind == "choice" or kind == "evidence_ref":
            allowed = (
                sorted(evidence_refs or ())
                if kind == "evidence_ref"
                else [str(c) for c in spec.get("choices", [])]
            )
            checked = kind == "choice" or evidence_refs is not None
            if checked and str(raw) not in allowed:
                errors[f"fields.{name}"] = [
                    _("%(label)s must be one of %(choices)s.")
                    % {"label": label, "choices": ", ".join(allowed)}
                ]
                continue
            clean[name] = str(raw)
        elif kind == "decimal":
            try:
                value = Decimal(str(raw))
            except (InvalidOperation, ValueError):
                errors[f"fields.{name}"] = [_("%(label)s must be a number.") % {"label": label}]
                continue
            if not value.is_finite() or value < 0:
                errors[f"fields.{name}"] = [
                    _("%(label)s must be a positive number.") % {"label": label}
                ]
                continue
            clean[name] = str(value)
        else:
            text = str(raw).strip()
            limit = int(spec.get("max_length", 2000))
            if len(text) > limit:
                errors[f"fields.{name}"] = [
                    _("%(label)s is longer than %(limit)d characters.")
                    % {"label": label, "limit": limit}
                ]
                continue
            clean[name] = text
    if errors:
        raise CaseError("invalid", _("Some fields need attention."), fields=errors)
    return clean


@dataclass(frozen=True)
class DecisionResult:
    decision: Decision
    replayed: bool  # True when this resolution id had already been used: the first answer


def decide_case(
    *,
    case_id: str,
    actor: Any,
    expected_version: int,
    lease_token: str,
    resolution: str,
    fields: dict[str, Any],
    note: str,
    resolution_id: str,
    evidence_digest: str,
) -> DecisionResult:
    """Accept one decision, or explain why not.

    A resolution id already used returns the first result. Otherwise, in one transaction:
    authorize, check state, lease, version and evidence digest, reserve the resolution id
    (unique), store the decision and its audit event, write the outbox event and move the
    case to resolution_pending. The relay runs after commit.
    """
    if not resolution_id:
        raise CaseError.invalid("resolution_id", _("A resolution id is required."))
    access_case(actor, case_id)  # the first answer only to someone who may see the case
    previous = _previous_result(resolution_id, case_id)
    if previous:
        return previous
    try:
        with transaction.atomic(durable=True):
            case = access_case(actor, case_id, for_update=True)
            require_eligible(actor, case)
            if hasattr(case, "decision"):
                if case.decision.resolution_id == resolution_id:
                    # The same submission raced itself past the first check (double click,
                    # retried request) and waited on the case lock: the first answer.
                    return DecisionResult(decision=case.decision, replayed=True)
                raise CaseError(
                    "conflict", _("Another reviewer already decided this case."), case=case
                )
            _require_live_lease(case, actor, lease_token)
            if case.version != expected_version:
                raise CaseError("conflict", _("The case changed since you loaded it."), case=case)
            if evidence_digest != case.evidence_digest:
                raise CaseError(
                    "conflict", _("New evidence arrived since you loaded the case."), case=case
                )
            chosen = next((r for r in allowed_resolutions(case) if r.code == resolution), None)
            if chosen is None or chosen.outcome == Outcome.REQUEST_INFORMATION:
                raise CaseError.invalid("resolution", _("Choose one of the allowed resolutions."))
            if chosen.required_group and not in_group(actor, chosen.required_group):
                raise CaseError(
                    "forbidden",
                    _("Only a %(group)s may choose %(resolution)s.")
                    % {"group": chosen.required_group, "resolution": chosen.label},
                )
            refs = set(case.evidence.values_list("ref", flat=True))
            clean = _validate_fields(chosen, fields, evidence_refs=refs)
            note = (note or "").strip()
            if chosen.requires_reason and not note:
                raise CaseError.invalid("note", _("A reason is required for this resolution."))
            now = timezone.now()
            decision = Decision.objects.create(
                case=case,
                resolution_id=resolution_id,
                resolution=chosen.code,
                outcome=chosen.outcome,
                fields=clean,
                note=note,
                actor=actor,
                decided_at=now,
                case_version=case.version,
                evidence_version=case.evidence_version,
                evidence_digest=case.evidence_digest,
                decision_policy_version=DECISION_POLICY_VERSION,
            )
            before = snapshot(case)
            move(case, State.RESOLUTION_PENDING)
            clear_lease(case)
            case.delivery_status = DeliveryStatus.PENDING
            commit_change(
                case,
                actor=Actor.user(actor),
                action="case.decided",
                before=before,
                reason=note,
                extra={
                    "resolution": chosen.code,
                    "resolution_id": resolution_id,
                    "fields_digest": sha256_hex(clean),
                },
            )
            event = OutboxEvent(case=case, type="case.decided", created_at=now, next_attempt_at=now)
            event.body = event_body(event, case, decision=decision)
            event.save(force_insert=True)
            enqueue_after_commit(event.pk)
    except IntegrityError:
        # Two submissions with one resolution id raced; the other one reserved it first.
        previous = _previous_result(resolution_id, case_id)
        if previous:
            return previous
        raise
    return DecisionResult(decision=decision, replayed=False)


def _previous_result(resolution_id: str, case_id: str) -> DecisionResult | None:
    previous = (
        Decision.objects.select_related("case", "actor").filter(resolution_id=resolution_id).first()
    )
    if previous is None:
        return None
    if previous.case_id != case_id:
        raise CaseError.invalid("resolution_id", _("This resolution id belongs to another case."))
    return DecisionResult(decision=previous, replayed=True)


def save_draft(
    *, case_id: str, actor: Any, resolution: str, fields: dict[str, Any], note: str
) -> Draft:
    """Autosave. A draft is never a decision and changes nothing about the case."""
    case = access_case(actor, case_id)
    require_work(actor, case)
    draft, _ = Draft.objects.update_or_create(
        case=case,
        user=actor,
        defaults={
            "resolution": resolution[:64],
            "fields": fields,
            "note": note,
            "saved_at": timezone.now(),
        },
    )
    return draft


def request_information(
    *,
    case_id: str,
    actor: Any,
    expected_version: int,
    lease_token: str,
    question: str,
    asked_of: str,
) -> Case:
    """Not a decision: the case waits (age keeps running; blocked time is counted apart)."""
    errors: dict[str, list[str]] = {}
    if not question.strip():
        errors["question"] = [_("Say what information is needed.")]
    if not asked_of.strip():
        errors["asked_of"] = [_("Say whom you are asking.")]
    if errors:
        raise CaseError("invalid", _("Some fields need attention."), fields=errors)
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_eligible(actor, case)
        if case.state == State.CLAIMED:
            _require_live_lease(case, actor, lease_token)
        elif case.state != State.OPEN:
            raise CaseError(
                "conflict",
                _("A %(state)s case cannot wait for information.") % {"state": case.state},
                case=case,
            )
        if case.version != expected_version:
            raise CaseError("conflict", _("The case changed since you loaded it."), case=case)
        before = snapshot(case)
        now = timezone.now()
        move(case, State.WAITING)
        case.assignee = None
        clear_lease(case)
        case.waiting_on = {
            "question": question.strip(),
            "asked_of": asked_of.strip(),
            "asked_by": actor.get_username(),
            "since": now.isoformat(),
        }
        case.waiting_since = now
        commit_change(
            case,
            actor=Actor.user(actor),
            action="case.information_requested",
            before=before,
            reason=question.strip(),
        )
        if case.exception_class.emits_information_requested:
            event = OutboxEvent(
                case=case, type="case.information_requested", created_at=now, next_attempt_at=now
            )
            event.body = event_body(event, case, request=case.waiting_on, actor=actor)
            event.save(force_insert=True)
            enqueue_after_commit(event.pk)
        return case


def record_answer(*, case_id: str, actor: Any, answer: str) -> Case:
    if not answer.strip():
        raise CaseError.invalid("answer", _("Write down the answer you received."))
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_work(actor, case)
        if case.state != State.WAITING:
            raise CaseError("conflict", _("The case is not waiting for information."), case=case)
        before = snapshot(case)
        move(case, State.OPEN)
        case.waiting_on = {
            **case.waiting_on,
            "answer": answer.strip(),
            "answered_by": actor.get_username(),
        }
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.answer_recorded",
            before=before,
            reason=answer.strip(),
        )


def reconcile_side_effect(
    *,
    case_id: str,
    actor: Any,
    expected_version: int,
    state: str,
    provider_record: str,
) -> Case:
    """A worker records what the destination says happened, with its record or idempotency
    key, so that retry-like resolutions can be offered again (or stay hidden)."""
    if state not in {SideEffectState.CONFIRMED_APPLIED, SideEffectState.CONFIRMED_REJECTED}:
        raise CaseError.invalid("state", _("Choose confirmed applied or confirmed rejected."))
    if not provider_record.strip():
        raise CaseError.invalid(
            "provider_record", _("Give the provider record or idempotency key you checked.")
        )
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_eligible(actor, case)
        if case.state not in {State.OPEN, State.CLAIMED, State.WAITING}:
            raise CaseError(
                "conflict",
                _("A %(state)s case cannot be reconciled.") % {"state": case.state},
                case=case,
            )
        if case.version != expected_version:
            raise CaseError("conflict", _("The case changed since you loaded it."), case=case)
        before = snapshot(case)
        case.side_effect_state = state
        case.side_effect_record = {
            "provider_record": provider_record.strip(),
            "reconciled_by": actor.get_username(),
        }
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.side_effect_reconciled",
            before=before,
            reason=provider_record.strip(),
        )
