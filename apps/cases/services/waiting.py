from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor

from ..models import Case, State
from .transitions import commit_change, move, snapshot


def expire_waits(*, now: datetime | None = None) -> int:
    """A waiting case whose class's wait timeout passed returns to open. Idempotent: each
    case is re-read under lock and moved only while still waiting."""
    now = now or timezone.now()
    candidates = (
        Case.objects.filter(state=State.WAITING, waiting_since__isnull=False)
        .select_related("exception_class")
        .only("pk", "waiting_since", "exception_class__wait_timeout_minutes")
    )
    due = [
        c.pk
        for c in candidates
        if c.waiting_since + timedelta(minutes=c.exception_class.wait_timeout_minutes) <= now
    ]
    moved = 0
    for case_id in due:
        with transaction.atomic(durable=True):
            case = (
                Case.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("queue", "assignee")
                .filter(pk=case_id, state=State.WAITING)
                .first()
            )
            if case is None:
                continue
            before = snapshot(case)
            move(case, State.OPEN)
            commit_change(
                case,
                actor=Actor.system("wait-sweep"),
                action="case.wait_timed_out",
                before=before,
                reason="no answer within the wait timeout",
            )
            moved += 1
    return moved
