"""Two beats may run the same sweep at once (a slow run and the next one, or two beat
processes). The escalation ladder must still fire once per level, tell each person once per
level, move each late case to overflow once; override expiry must end each override once."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.models import Case, Escalation, Notification, Transfer
from apps.cases.services import claim_case, escalate_due_cases, expire_overrides, override_priority
from apps.routing.models import ExceptionClass, WorkerProfile
from tests.concurrency.threads import run_at_once

from .conftest import LEVELS, moment

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

CASES = 16


def test_escalation_ladder_fires_once_per_level_across_two_concurrent_sweeps(
    ladder, people, overflow_supervisor, control_owner, file_invoice_case
):
    ExceptionClass.objects.filter(pk=ladder.pk).update(control_owner=control_owner)
    cases = [file_invoice_case() for _ in range(CASES)]
    held = {case.pk for case in cases[::2]}  # half held by wendy, half unowned
    WorkerProfile.objects.filter(user=people["worker"]).update(capacity=CASES)
    for case_id in held:
        claim_case(case_id=case_id, actor=people["worker"])
    ids = [case.pk for case in cases]
    late = max(moment(case, -100) for case in cases)

    outcomes = run_at_once([lambda: escalate_due_cases(now=late) for _ in range(2)])

    assert all(isinstance(count, int) for count in outcomes), outcomes
    assert sum(outcomes) == CASES * len(LEVELS)
    per_level = Counter(Escalation.objects.filter(case_id__in=ids).values_list("case_id", "level"))
    assert per_level == Counter({(case_id, level): 1 for case_id in ids for level in LEVELS})
    assert set(Case.objects.filter(pk__in=ids).values_list("escalation_level", flat=True)) == {5}

    # Each person hears once per level per case: reminders to wendy alone for the cases she
    # holds, to everyone working the queue for the others.
    heard = Counter(
        Notification.objects.filter(case_id__in=ids).values_list(
            "case_id", "user__username", "kind"
        )
    )
    expected: Counter[tuple[str, str, str]] = Counter()
    for case_id in ids:
        reminded = ["wendy"] if case_id in held else ["wendy", "walter", "sam"]
        for name in reminded:
            expected[(case_id, name, "escalation.reminder")] += 1
        expected[(case_id, "sam", "escalation.supervisor_alert")] += 1
        expected[(case_id, "olga", "escalation.overflow")] += 1
        expected[(case_id, "carla", "escalation.control_owner")] += 1
    assert heard == expected
    assert len(mail.outbox) == sum(expected.values())  # every one of them has an address

    # Each late case moved to the overflow queue once, by the rule.
    moved = Counter(
        Transfer.objects.filter(case_id__in=ids, to_queue__name="ap_overflow").values_list(
            "case_id", flat=True
        )
    )
    assert moved == Counter(ids)
    assert set(Case.objects.filter(pk__in=ids).values_list("queue__name", flat=True)) == {
        "ap_overflow"
    }
    escalated = Counter(
        AuditEvent.objects.filter(stream__in=ids, action="case.escalated").values_list(
            "stream", flat=True
        )
    )
    assert escalated == Counter({case_id: len(LEVELS) for case_id in ids})
    assert AuditEvent.objects.filter(stream__in=ids, action="case.breached").count() == CASES
    assert list(verify(ids)) == []


def test_two_override_sweeps_at_once_end_each_expired_override_once(people, file_invoice_case):
    start = timezone.now()
    ids = []
    for _ in range(CASES):
        case = file_invoice_case()
        override_priority(
            case_id=case.pk,
            actor=people["supervisor"],
            band="P1",
            reason="quarter close",
            expires_at=start + timedelta(hours=1),
        )
        ids.append(case.pk)

    outcomes = run_at_once(
        [lambda: expire_overrides(now=start + timedelta(hours=1, seconds=1)) for _ in range(2)]
    )

    assert sum(outcomes) == CASES, outcomes
    assert not Case.objects.filter(pk__in=ids).exclude(priority_override_band="").exists()
    expired = Counter(
        AuditEvent.objects.filter(
            stream__in=ids, action="case.priority_override_expired"
        ).values_list("stream", flat=True)
    )
    assert expired == Counter(ids)
    assert list(verify(ids)) == []
