"""Priority ages with the clock: due-time proximity and age are recomputed periodically."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, record

from ..models import Case, State
from .common import refresh_priority

ACTIVE = [State.OPEN, State.CLAIMED, State.WAITING]
PRIORITY_FIELDS = [
    "priority_band",
    "priority_score",
    "priority_components",
    "priority_policy_version",
    "priority_explanation",
    "updated_at",
]


def refresh_priorities(*, now: datetime | None = None) -> int:
    """Recompute every active case's priority; returns how many bands changed.

    The case version is not bumped: priority is the desk's ordering, not a fact the worker's
    decision rests on, so an open decision form stays valid. A band change is audited;
    a reworded explanation ("due 40 min" -> "due 39 min") is not a transition.
    Safe when two sweeps overlap: each case is re-read under a SKIP LOCKED row lock.
    """
    now = now or timezone.now()
    changed_bands = 0
    ids = list(Case.objects.filter(state__in=ACTIVE).values_list("pk", flat=True))
    for case_id in ids:
        with transaction.atomic(durable=True):
            case = (
                Case.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(pk=case_id, state__in=ACTIVE)
                .first()
            )
            if case is None:
                continue
            before = (case.priority_band, case.priority_score, case.priority_explanation)
            refresh_priority(case, now=now)
            after = (case.priority_band, case.priority_score, case.priority_explanation)
            if after == before:
                continue
            case.save(update_fields=PRIORITY_FIELDS)
            if after[0] != before[0]:
                changed_bands += 1
                record(
                    stream=case.pk,
                    actor=Actor.system("priority-sweep"),
                    action="case.priority_changed",
                    before={"priority": before[0], "score": before[1]},
                    after={
                        "priority": after[0],
                        "score": after[1],
                        "components": case.priority_components,
                        "policy_version": case.priority_policy_version,
                    },
                    reason=case.priority_explanation,
                    at=now,
                )
    return changed_bands
