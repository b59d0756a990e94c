"""A supervisor may move a due date with a reason; the original due date is kept for ever
and a breach, once recorded, is never erased."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.services import adjust_due, escalate_due_cases


def test_a_supervisor_moves_the_due_date_and_the_original_is_kept(supervisor, file_invoice_case):
    case = file_invoice_case()
    original = case.original_due_at
    new_due = case.due_at + timedelta(hours=6)

    adjust_due(case_id=case.pk, actor=supervisor, due_at=new_due, reason="vendor on holiday")
    adjust_due(
        case_id=case.pk, actor=supervisor, due_at=new_due + timedelta(hours=1), reason="again"
    )

    case.refresh_from_db()
    assert case.due_at == new_due + timedelta(hours=1)
    assert case.original_due_at == original
    assert case.version == 1  # a worker's open decision form stays valid
    events = list(AuditEvent.objects.filter(stream=case.pk, action="case.due_adjusted"))
    assert [event.reason for event in events] == ["vendor on holiday", "again"]
    assert events[0].before["due_at"] == original.isoformat()
    assert events[0].after["due_at"] == new_due.isoformat()
    assert events[0].after["original_due_at"] == original.isoformat()
    assert events[0].actor_label == "sam"
    assert list(verify([case.pk])) == []


def test_extending_a_breached_case_keeps_its_breach(supervisor, file_invoice_case):
    case = file_invoice_case()
    past_due = case.due_at + timedelta(minutes=5)
    escalate_due_cases(now=past_due)
    case.refresh_from_db()
    assert case.breached_at == case.due_at

    with time_machine.travel(past_due, tick=False):
        adjust_due(
            case_id=case.pk,
            actor=supervisor,
            due_at=past_due + timedelta(days=1),
            reason="waiting on the bank",
        )
    escalate_due_cases(now=past_due + timedelta(minutes=1))

    case.refresh_from_db()
    assert case.breached_at == case.original_due_at
    assert case.due_at == past_due + timedelta(days=1)


def test_moving_the_date_before_the_sweep_noticed_the_breach_still_records_it(
    supervisor, file_invoice_case
):
    case = file_invoice_case()
    late = case.due_at + timedelta(minutes=1)

    with time_machine.travel(late, tick=False):
        adjust_due(
            case_id=case.pk, actor=supervisor, due_at=late + timedelta(hours=2), reason="rescue"
        )

    case.refresh_from_db()
    assert case.breached_at == case.original_due_at


def test_only_a_supervisor_moves_due_dates_and_only_with_a_reason_and_a_future_date(
    supervisor, worker, outsider, file_invoice_case
):
    case = file_invoice_case()
    later = case.due_at + timedelta(hours=1)
    for actor, kind in ((worker, "forbidden"), (outsider, "not_found")):
        with pytest.raises(CaseError) as error:
            adjust_due(case_id=case.pk, actor=actor, due_at=later, reason="mine")
        assert error.value.kind == kind
    for due_at, reason, field in (
        (later, " ", "reason"),
        (None, "why", "due_at"),
        (timezone.now() - timedelta(minutes=1), "why", "due_at"),
    ):
        with pytest.raises(CaseError) as error:
            adjust_due(case_id=case.pk, actor=supervisor, due_at=due_at, reason=reason)
        assert error.value.kind == "invalid" and field in error.value.fields

    unchanged = type(case).objects.get(pk=case.pk)
    assert unchanged.due_at == case.due_at
    assert not AuditEvent.objects.filter(stream=case.pk, action="case.due_adjusted").exists()
