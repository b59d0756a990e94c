"""Shifts: going off shift hands off held cases (a note is required for complex active
work), absence recovery by a supervisor, the shift-end sweep, and going back on shift."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.errors import CaseError
from apps.cases.models import Case, Draft, State, Transfer
from apps.cases.services import (
    claim_case,
    end_shifts,
    go_off_shift,
    go_on_shift,
    save_draft,
)
from apps.routing.models import WorkerProfile

from .conftest import make_worker


def on_shift(user) -> bool:
    return WorkerProfile.objects.get(user=user).on_shift


def test_going_off_shift_with_a_heavy_case_requires_a_hand_off_note(file_case_with):
    wendy = make_worker("wendy")
    heavy = claim_case(case_id=file_case_with(workload_weight=2).pk, actor=wendy)

    with pytest.raises(CaseError) as refused:
        go_off_shift(worker=wendy, actor=wendy)

    assert refused.value.kind == "invalid"
    assert list(refused.value.fields) == ["handoff_note"]
    assert heavy.case_ref in refused.value.fields["handoff_note"][0]
    assert on_shift(wendy)
    assert Case.objects.get(pk=heavy.pk).state == State.CLAIMED  # nothing changed


def test_going_off_shift_with_a_drafted_case_requires_a_note_and_keeps_the_draft(file_case_with):
    wendy = make_worker("wendy")
    case = claim_case(case_id=file_case_with().pk, actor=wendy)
    original_due = case.original_due_at
    save_draft(
        case_id=case.pk,
        actor=wendy,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="",
    )
    with pytest.raises(CaseError):
        go_off_shift(worker=wendy, actor=wendy, handoff_note="   ")

    handed = go_off_shift(
        worker=wendy, actor=wendy, handoff_note="PO 781 looks right; waiting on the GRN scan."
    )

    assert handed == 1
    assert not on_shift(wendy)
    case.refresh_from_db()
    assert (case.state, case.assignee, case.lease_kind) == (State.OPEN, None, "")
    assert (case.transfer_count, case.original_due_at) == (1, original_due)
    transfer = Transfer.objects.get(case=case)
    assert transfer.kind == "handoff"
    assert transfer.note == "PO 781 looks right; waiting on the GRN scan."
    assert transfer.draft_policy == "kept"
    assert Draft.objects.get(case=case, user=wendy).fields == {"po_number": "po_781"}
    event = AuditEvent.objects.filter(stream=case.pk).latest("sequence")
    assert (event.action, event.after["note"]) == (
        "case.handed_off",
        "PO 781 looks right; waiting on the GRN scan.",
    )
    shift = AuditEvent.objects.get(stream="worker:wendy", action="worker.off_shift")
    assert shift.after["handed_off"] == [case.pk]


def test_simple_work_is_handed_off_without_a_note(file_case_with):
    wendy = make_worker("wendy")
    cases = [claim_case(case_id=file_case_with().pk, actor=wendy) for _ in range(2)]

    assert go_off_shift(worker=wendy, actor=wendy) == 2

    assert Case.objects.filter(pk__in=[c.pk for c in cases], state=State.OPEN).count() == 2
    assert set(Transfer.objects.values_list("kind", "note")) == {("handoff", "")}


def test_a_supervisor_recovers_an_absent_workers_cases_without_a_note(file_case_with, lead):
    wendy = make_worker("wendy")
    case = claim_case(case_id=file_case_with(workload_weight=3).pk, actor=wendy)

    assert go_off_shift(worker=wendy, actor=lead, absence=True) == 1

    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.actor, transfer.from_user) == ("absence", lead, wendy)
    assert not on_shift(wendy)


def test_absence_is_declared_by_a_supervisor_not_by_a_colleague_or_the_worker(file_case_with):
    wendy = make_worker("wendy")
    walter = make_worker("walter")
    claim_case(case_id=file_case_with().pk, actor=wendy)

    for actor in (wendy, walter):
        with pytest.raises(CaseError) as refused:
            go_off_shift(worker=wendy, actor=actor, absence=True)
        assert refused.value.kind == "forbidden"
    assert on_shift(wendy)
    assert not Transfer.objects.exists()


def test_the_shift_end_sweep_hands_off_by_rule_once(file_case_with):
    now = timezone.now()
    wendy = make_worker("wendy", shift_ends_at=now + timedelta(hours=1))
    walter = make_worker("walter", shift_ends_at=now + timedelta(hours=3))
    case = claim_case(case_id=file_case_with(workload_weight=2).pk, actor=wendy)

    with time_machine.travel(now + timedelta(hours=1, minutes=1), tick=False):
        assert end_shifts() == 1
        assert end_shifts() == 0

    assert not on_shift(wendy)
    assert on_shift(walter)
    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.rule, transfer.actor, transfer.note) == (
        "handoff",
        "shift-end",
        None,
        "shift ended",
    )
    event = AuditEvent.objects.get(stream="worker:wendy", action="worker.off_shift")
    assert (event.actor_kind, event.actor_label) == ("system", "shift-end")
    assert WorkerProfile.objects.get(user=wendy).shift_ends_at is None


def test_back_on_shift_the_worker_can_take_cases_again(file_case_with):
    wendy = make_worker("wendy", on_shift=False)
    case = file_case_with()
    with pytest.raises(CaseError):
        claim_case(case_id=case.pk, actor=wendy)

    go_on_shift(worker=wendy, actor=wendy)
    go_on_shift(worker=wendy, actor=wendy)  # idempotent

    assert claim_case(case_id=case.pk, actor=wendy).assignee == wendy
    assert AuditEvent.objects.filter(stream="worker:wendy", action="worker.on_shift").count() == 1


def test_a_colleague_cannot_change_someone_elses_shift(reference_data):
    wendy = make_worker("wendy")
    walter = make_worker("walter")

    with pytest.raises(CaseError) as refused:
        go_off_shift(worker=wendy, actor=walter)

    assert refused.value.kind == "forbidden"
    assert on_shift(wendy)
