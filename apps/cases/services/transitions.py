"""The one map of allowed state transitions, and the only place that assigns Case.state."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record

from ..errors import CaseError
from ..models import Case, State

ALLOWED: dict[str, set[str]] = {
    State.OPEN: {State.CLAIMED, State.WAITING, State.CLOSED},
    State.CLAIMED: {State.OPEN, State.RESOLUTION_PENDING, State.WAITING, State.CLOSED},
    State.WAITING: {State.OPEN, State.CLOSED},
    State.RESOLUTION_PENDING: {State.RESOLVED},
    State.QUARANTINED: {State.CLOSED},
    State.RESOLVED: set(),
    State.CLOSED: set(),
}

WORKABLE = {State.OPEN, State.CLAIMED, State.WAITING}


def snapshot(case: Case) -> dict[str, Any]:
    """What the audit log keeps of a case: ids, states and digests, never evidence content."""
    return {
        "state": case.state,
        "queue": case.queue.name if case.queue_id else None,
        "assignee": case.assignee.get_username() if case.assignee_id else None,
        "version": case.version,
        "priority": case.priority_band,
        "due_at": case.due_at.isoformat() if case.due_at else None,
        "side_effect_state": case.side_effect_state,
        "evidence_version": case.evidence_version,
        "evidence_digest": case.evidence_digest,
        "delivery_status": case.delivery_status,
    }


def clear_lease(case: Case) -> None:
    case.lease_token = ""
    case.lease_expires_at = None


def move(case: Case, to: str) -> None:
    if to != case.state and to not in ALLOWED[case.state]:
        raise CaseError(
            "conflict",
            _("A case that is %(state)s cannot become %(target)s.")
            % {"state": case.state, "target": to},
            case=case,
        )
    if case.state == State.WAITING and to != State.WAITING and case.waiting_since:
        case.blocked_seconds += int((timezone.now() - case.waiting_since).total_seconds())
        case.waiting_since = None
    case.state = to


def commit_change(
    case: Case,
    *,
    actor: Actor,
    action: str,
    before: dict[str, Any],
    reason: str = "",
    extra: dict[str, Any] | None = None,
    bump_version: bool = True,
) -> Case:
    """Save the locked case, bump its version and write the audit event, in the caller's
    transaction (which must hold the case row lock)."""
    if bump_version:
        case.version += 1
    case.save()
    record(
        stream=case.pk,
        actor=actor,
        action=action,
        before=before,
        after={**snapshot(case), **(extra or {})},
        reason=reason,
    )
    return case
