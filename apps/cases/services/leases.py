"""Claims are leases: a token and an expiry, renewed by activity, returned on release,
logout or expiry. Lock order everywhere: the worker's profile row, then the case."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.audit.services import Actor, record
from apps.routing.models import WorkerProfile

from ..access import access_case, require_eligible
from ..errors import CaseError
from ..models import Case, State
from .transitions import clear_lease, commit_change, move, snapshot


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.EXCEPTION_DESK["LEASE_SECONDS"])


def _lock_worker(user: Any) -> None:
    # Taken first so that later capacity checks (and parallel "next case" requests of one
    # worker) serialize on the worker, always before any case row: one lock order, no
    # deadlocks.
    WorkerProfile.objects.get_or_create(user=user)
    WorkerProfile.objects.select_for_update().filter(user=user).first()


def claim_case(*, case_id: str, actor: Any) -> Case:
    with transaction.atomic(durable=True):
        _lock_worker(actor)
        case = access_case(actor, case_id, for_update=True)
        require_eligible(actor, case)
        if case.state == State.CLAIMED and case.assignee_id == actor.pk:
            return case  # a double click is not a conflict
        if case.state != State.OPEN:
            who = f" by {case.assignee.get_username()}" if case.assignee_id else ""
            raise CaseError(
                "conflict", f"The case is {case.get_state_display().lower()}{who}.", case=case
            )
        before = snapshot(case)
        move(case, State.CLAIMED)
        case.assignee = actor
        case.lease_token = secrets.token_urlsafe(24)
        case.lease_expires_at = timezone.now() + lease_duration()
        return commit_change(case, actor=Actor.user(actor), action="case.claimed", before=before)


def _require_live_lease(case: Case, actor: Any, lease_token: str) -> None:
    if (
        case.state != State.CLAIMED
        or case.assignee_id != actor.pk
        or not secrets.compare_digest(case.lease_token, lease_token or "")
    ):
        raise CaseError("conflict", "You no longer hold this case's lease.", case=case)
    if case.lease_expires_at is None or case.lease_expires_at <= timezone.now():
        raise CaseError("conflict", "Your lease on this case has lapsed.", case=case)


def renew_lease(*, case_id: str, actor: Any, lease_token: str) -> Case:
    """Extend a live lease. Called on the worker's activity, never by a timer in an idle tab.
    Renewal does not change the case version, so an open decision form stays valid."""
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        _require_live_lease(case, actor, lease_token)
        case.lease_expires_at = timezone.now() + lease_duration()
        case.save(update_fields=["lease_expires_at", "updated_at"])
        return case


def release_case(*, case_id: str, actor: Any, lease_token: str, reason: str = "") -> Case:
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        if (
            case.state != State.CLAIMED
            or case.assignee_id != actor.pk
            or not secrets.compare_digest(case.lease_token, lease_token or "")
        ):
            raise CaseError("conflict", "You do not hold this case.", case=case)
        before = snapshot(case)
        move(case, State.OPEN)
        case.assignee = None
        clear_lease(case)
        return commit_change(
            case,
            actor=Actor.user(actor),
            action="case.released",
            before=before,
            reason=reason or "released by worker",
        )


def release_user_leases(*, user: Any, reason: str) -> int:
    """Logout (or going off shift) returns every case the user holds."""
    released = 0
    ids = list(Case.objects.filter(state=State.CLAIMED, assignee=user).values_list("pk", flat=True))
    for case_id in ids:
        with transaction.atomic(durable=True):
            case = (
                Case.objects.select_for_update(of=("self",))
                .select_related("queue", "assignee")
                .filter(pk=case_id, state=State.CLAIMED, assignee=user)
                .first()
            )
            if case is None:
                continue
            before = snapshot(case)
            move(case, State.OPEN)
            case.assignee = None
            clear_lease(case)
            commit_change(
                case, actor=Actor.user(user), action="case.released", before=before, reason=reason
            )
            released += 1
    return released


def expire_leases(*, now: datetime | None = None) -> int:
    """Return every case whose lease lapsed to open. Set-based and safe when two sweeps overlap:
    rows are taken with SKIP LOCKED and updated only while still claimed and expired, which
    also proves no decision committed (a decision moves the case out of `claimed` in the same
    transaction). Drafts are kept."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        expired = list(
            Case.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(state=State.CLAIMED, lease_expires_at__lte=now, decision__isnull=True)
            .select_related("queue", "assignee")[:500]
        )
        if not expired:
            return 0
        ids = [case.pk for case in expired]
        updated = Case.objects.filter(
            pk__in=ids, state=State.CLAIMED, lease_expires_at__lte=now
        ).update(
            state=State.OPEN,
            assignee=None,
            lease_token="",
            lease_expires_at=None,
            version=F("version") + 1,
            updated_at=now,
        )
        for case in expired:
            before = snapshot(case)
            holder = case.assignee.get_username() if case.assignee_id else None
            case.state, case.assignee, case.version = State.OPEN, None, case.version + 1
            clear_lease(case)
            record(
                stream=case.pk,
                actor=Actor.system("lease-sweep"),
                action="case.lease_expired",
                before=before,
                after={**snapshot(case), "previous_holder": holder},
                reason="lease expired without a decision",
                at=now,
            )
        return updated
