"""A supervisor steers a case without touching its facts: a manual priority override (value,
reason, actor, expiry; it expires by itself) and an adjusted due date (the original kept).

Neither changes the case version: priority and due date are the desk's ordering, not facts
a worker's decision rests on, so an open decision form stays valid.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record

from ..access import access_case, require_supervise
from ..errors import CaseError
from ..models import Case
from .common import refresh_priority
from .transitions import WORKABLE, commit_change, snapshot

BANDS = ("P1", "P2", "P3", "P4")
MAX_OVERRIDE = timedelta(days=7)
OVERRIDE_FIELDS = [
    "priority_override_band",
    "priority_override_reason",
    "priority_override_by",
    "priority_override_expires_at",
]
PRIORITY_FIELDS = [
    "priority_band",
    "priority_score",
    "priority_components",
    "priority_policy_version",
    "priority_explanation",
]


def override_active(case: Case, now: datetime) -> bool:
    return bool(
        case.priority_override_band
        and case.priority_override_expires_at is not None
        and case.priority_override_expires_at > now
    )


def _override_summary(case: Case) -> dict[str, Any]:
    return {
        "band": case.priority_override_band or None,
        "reason": case.priority_override_reason,
        "by": case.priority_override_by.get_username() if case.priority_override_by_id else None,
        "expires_at": case.priority_override_expires_at.isoformat()
        if case.priority_override_expires_at
        else None,
    }


def refresh_with_override(case: Case, *, now: datetime) -> None:
    """Recompute the case's priority so that an active override wins.

    common.refresh_priority is meant to honour case.priority_override_*; while it does not
    (the routing change lands separately), the override band is written over the policy's
    here so an override always shows. Once refresh_priority honours it this is a no-op.
    """
    refresh_priority(case, now=now)
    if override_active(case, now) and case.priority_band != case.priority_override_band:
        policy_band = case.priority_band
        case.priority_band = case.priority_override_band
        case.priority_explanation = _("%(band)s (override: %(reason)s; policy says %(policy)s)") % {
            "band": case.priority_override_band,
            "reason": case.priority_override_reason,
            "policy": policy_band,
        }
        case.priority_explanation = case.priority_explanation[:300]


def set_override(
    case: Case, *, band: str, reason: str, expires_at: datetime, by: Any, now: datetime
) -> None:
    """Put an override on a case locked by the caller (no audit: the caller records why)."""
    case.priority_override_band = band
    case.priority_override_reason = reason[:300]
    case.priority_override_by = by
    case.priority_override_expires_at = expires_at
    refresh_with_override(case, now=now)


def _clear_override(case: Case, *, now: datetime) -> None:
    case.priority_override_band = ""
    case.priority_override_reason = ""
    case.priority_override_by = None
    case.priority_override_expires_at = None
    if case.state in WORKABLE:
        refresh_priority(case, now=now)


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise CaseError.invalid("reason", _("A reason is required."))
    if len(reason) > 300:
        raise CaseError.invalid("reason", _("Keep the reason under 300 characters."))
    return reason


def _require_workable(case: Case) -> None:
    if case.state not in WORKABLE:
        raise CaseError(
            "conflict",
            _("A case that is %(state)s can no longer be steered.")
            % {"state": case.get_state_display().lower()},
            case=case,
        )


def override_priority(
    *, case_id: str, actor: Any, band: str, reason: str, expires_at: datetime | None
) -> Case:
    """A supervisor of the case's queue sets its band (P1-P4) until ``expires_at`` (in the
    future, at most seven days away) with a reason. Audited; the sweep ends it at expiry."""
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_supervise(actor, case)
        now = timezone.now()
        band = (band or "").strip().upper()
        errors: dict[str, list[str]] = {}
        if band not in BANDS:
            errors["band"] = [_("Choose a band from P1 to P4.")]
        try:
            reason = _require_reason(reason)
        except CaseError as error:
            errors.update(error.fields)
        if expires_at is None:
            errors["expires_at"] = [_("An override needs an expiry.")]
        elif timezone.is_naive(expires_at):
            errors["expires_at"] = [_("Give the expiry with its time zone.")]
        elif expires_at <= now:
            errors["expires_at"] = [_("The expiry must be in the future.")]
        elif expires_at > now + MAX_OVERRIDE:
            errors["expires_at"] = [_("An override lasts at most seven days.")]
        if errors or expires_at is None:
            raise CaseError("invalid", _("Some fields need attention."), fields=errors)
        _require_workable(case)
        before = {**snapshot(case), "override": _override_summary(case)}
        set_override(case, band=band, reason=reason, expires_at=expires_at, by=actor, now=now)
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.priority_overridden",
            before=before,
            reason=reason,
            extra={"override": _override_summary(case), "explanation": case.priority_explanation},
            bump_version=False,
        )


def clear_priority_override(*, case_id: str, actor: Any, reason: str) -> Case:
    """A supervisor ends an override early; the band returns to the policy's. Clearing a
    case that has none (a second click) changes nothing."""
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_supervise(actor, case)
        reason = _require_reason(reason)
        if not case.priority_override_band:
            return case
        before = {**snapshot(case), "override": _override_summary(case)}
        _clear_override(case, now=timezone.now())
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.priority_override_cleared",
            before=before,
            reason=reason,
            extra={"override": None, "explanation": case.priority_explanation},
            bump_version=False,
        )


def expire_overrides(*, now: datetime | None = None) -> int:
    """End every override whose expiry passed; the band returns to the policy's. Returns how
    many ended. Idempotent and safe when two sweeps overlap: each case is re-read under a
    SKIP LOCKED row lock and changed only while its override is still there and expired."""
    now = now or timezone.now()
    due = Case.objects.exclude(priority_override_band="").filter(
        priority_override_expires_at__lte=now
    )
    ended = 0
    for case_id in list(due.values_list("pk", flat=True)):
        with transaction.atomic(durable=True):
            case = (
                Case.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("priority_override_by")
                .exclude(priority_override_band="")
                .filter(pk=case_id, priority_override_expires_at__lte=now)
                .first()
            )
            if case is None:
                continue
            before = {"priority": case.priority_band, "override": _override_summary(case)}
            _clear_override(case, now=now)
            case.save(update_fields=[*OVERRIDE_FIELDS, *PRIORITY_FIELDS, "updated_at"])
            record(
                stream=case.pk,
                actor=Actor.system("override-sweep"),
                action="case.priority_override_expired",
                before=before,
                after={
                    "priority": case.priority_band,
                    "override": None,
                    "explanation": case.priority_explanation,
                },
                reason=before["override"]["reason"],
                at=now,
            )
            ended += 1
    return ended


def adjust_due(*, case_id: str, actor: Any, due_at: datetime | None, reason: str) -> Case:
    """A supervisor moves the due date with a reason. The original due date is kept for ever
    and a breach already recorded is never erased (moving the date later does not un-breach
    the case); escalation levels already fired stay fired."""
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_supervise(actor, case)
        now = timezone.now()
        errors: dict[str, list[str]] = {}
        try:
            reason = _require_reason(reason)
        except CaseError as error:
            errors.update(error.fields)
        if due_at is None:
            errors["due_at"] = [_("Give the new due date.")]
        elif timezone.is_naive(due_at):
            errors["due_at"] = [_("Give the due date with its time zone.")]
        elif due_at <= now:
            errors["due_at"] = [_("The new due date must be in the future.")]
        if errors or due_at is None:
            raise CaseError("invalid", _("Some fields need attention."), fields=errors)
        _require_workable(case)
        before = {
            **snapshot(case),
            "original_due_at": case.original_due_at.isoformat(),
            "breached_at": case.breached_at.isoformat() if case.breached_at else None,
        }
        if case.breached_at is None and case.due_at < now:
            # Past due before the sweep noticed: moving the date must not hide the breach.
            case.breached_at = case.due_at
        case.due_at = due_at
        refresh_with_override(case, now=now)
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.due_adjusted",
            before=before,
            reason=reason,
            extra={
                "original_due_at": case.original_due_at.isoformat(),
                "breached_at": case.breached_at.isoformat() if case.breached_at else None,
            },
            bump_version=False,
        )
