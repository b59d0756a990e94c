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
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record
from apps.routing.models import WorkerProfile

from ..access import access_case, require_eligible
from ..errors import CaseError
from ..models import Case, Draft, State, Transfer, TransferKind
from .alerts import clear_capacity_alert
from .capacity import lock_profile, require_headroom
from .transfers import record_transfer
from .transitions import clear_lease, commit_change, move, snapshot


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.EXCEPTION_DESK["LEASE_SECONDS"])


def _lock_worker(user: Any) -> WorkerProfile:
    # Taken first so that later capacity checks (and parallel "next case" requests of one
    # worker) serialize on the worker, always before any case row: one lock order, no
    # deadlocks.
    return lock_profile(user)


def claim_case(*, case_id: str, actor: Any) -> Case:
    """Pull: the worker takes a listed case under a lease. Eligibility (every hard constraint)
    and capacity (held weights + this case's <= effective capacity) are checked with the
    worker's profile row locked, so parallel claims of one worker cannot overshoot."""
    with transaction.atomic(durable=True):
        profile = _lock_worker(actor)
        case = access_case(actor, case_id, for_update=True)
        require_eligible(actor, case)
        if case.state == State.CLAIMED and case.assignee_id == actor.pk:
            # A double click is not a conflict. A lease that lapsed before the sweep returned
            # the case is taken up again, or its holder could neither decide nor reclaim it.
            if case.lease_expires_at is None or case.lease_expires_at <= timezone.now():
                case.lease_expires_at = timezone.now() + lease_duration()
                case.save(update_fields=["lease_expires_at", "updated_at"])
            return case
        if case.state != State.OPEN:
            state = case.get_state_display().lower()
            if case.assignee_id:
                message = _("The case is %(state)s by %(name)s.") % {
                    "state": state,
                    "name": case.assignee.get_username(),
                }
            else:
                message = _("The case is %(state)s.") % {"state": state}
            raise CaseError("conflict", message, case=case)
        now = timezone.now()
        require_headroom(profile, case, now=now)
        before = snapshot(case)
        move(case, State.CLAIMED)
        case.assignee = actor
        case.lease_token = secrets.token_urlsafe(24)
        case.lease_expires_at = now + lease_duration()
        case.lease_kind = "pull"
        WorkerProfile.objects.filter(pk=profile.pk).update(last_assigned_at=now)
        clear_capacity_alert(case=case)
        return commit_change(case, actor=Actor.user(actor), action="case.claimed", before=before)


def _require_live_lease(case: Case, actor: Any, lease_token: str) -> None:
    if (
        case.state != State.CLAIMED
        or case.assignee_id != actor.pk
        or not secrets.compare_digest(case.lease_token, lease_token or "")
    ):
        raise CaseError("conflict", _("You no longer hold this case's lease."), case=case)
    if case.lease_expires_at is None or case.lease_expires_at <= timezone.now():
        raise CaseError("conflict", _("Your lease on this case has lapsed."), case=case)


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
            raise CaseError("conflict", _("You do not hold this case."), case=case)
        before = snapshot(case)
        move(case, State.OPEN)
        case.assignee = None
        clear_lease(case)
        case.lease_kind = ""
        case.release_count += 1
        record_transfer(
            case,
            kind=TransferKind.RELEASE,
            from_user=actor,
            actor=actor,
            reason=reason or "released by worker",
        )
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
            case.lease_kind = ""
            case.release_count += 1
            record_transfer(
                case, kind=TransferKind.RELEASE, from_user=user, actor=user, reason=reason
            )
            commit_change(
                case, actor=Actor.user(user), action="case.released", before=before, reason=reason
            )
            released += 1
    return released


def expire_leases(*, now: datetime | None = None) -> int:
    """Return every case whose lease lapsed to open. Set-based and safe when two sweeps overlap:
    rows are taken with SKIP LOCKED and updated only while still claimed and expired, which
    also proves no decision committed (a decision moves the case out of `claimed` in the same
    transaction). Each return counts as a release and leaves a Transfer row (rule
    "lease-sweep") next to the audit event; drafts are kept, so whoever takes the case next
    (the same worker included) finds their own draft where they left it."""
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
            lease_kind="",
            release_count=F("release_count") + 1,
            version=F("version") + 1,
            updated_at=now,
        )
        with_drafts = set(Draft.objects.filter(case_id__in=ids).values_list("case_id", flat=True))
        Transfer.objects.bulk_create(
            Transfer(
                case=case,
                kind=TransferKind.RELEASE,
                from_queue=case.queue,
                to_queue=case.queue,
                from_user=case.assignee,
                rule="lease-sweep",
                reason="lease expired without a decision",
                draft_policy="kept" if case.pk in with_drafts else "",
                at=now,
            )
            for case in expired
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
