"""Supervisor transfers, overflow, reroutes, skips and releases: each keeps the case's id, age
and breach history, and records from, to, why, who and when."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.errors import CaseError
from apps.cases.models import Case, Draft, State, Transfer
from apps.cases.services import (
    claim_case,
    release_case,
    reroute_case,
    save_draft,
    skip_case,
    transfer_case,
)
from apps.routing.models import Queue

from .conftest import make_task_type, make_worker

BREACHED = timezone.now().replace(microsecond=0) - timedelta(hours=2)


@pytest.fixture
def late_case(file_case_with):
    """A case already past its due time, with its breach recorded."""
    case = file_case_with(due_at=BREACHED, original_due_at=BREACHED - timedelta(hours=1))
    Case.objects.filter(pk=case.pk).update(breached_at=BREACHED)
    case.refresh_from_db()
    return case


def clock_of(case: Case) -> tuple:
    case = Case.objects.get(pk=case.pk)
    return (case.pk, case.created_at, case.original_due_at, case.due_at, case.breached_at)


@pytest.fixture
def finance_lead(reference_data):
    return make_worker(
        "fay",
        role="supervisor",
        queues=(),
        supervise=("accounts_payable", "finance_approvals"),
        clearance="restricted",
    )


def test_a_supervisor_transfer_keeps_age_due_times_and_breach_and_records_everything(
    late_case, finance_lead
):
    wendy = make_worker("wendy")
    claim_case(case_id=late_case.pk, actor=wendy)
    save_draft(case_id=late_case.pk, actor=wendy, resolution="select_po", fields={}, note="half")
    before = clock_of(late_case)

    moved = transfer_case(
        case_id=late_case.pk,
        actor=finance_lead,
        to_queue="finance_approvals",
        reason="Needs an approver",
        note="Vendor called twice about this one",
    )

    assert clock_of(moved) == before
    moved.refresh_from_db()
    assert (moved.queue.name, moved.state, moved.assignee, moved.lease_token) == (
        "finance_approvals",
        State.OPEN,
        None,
        "",
    )
    assert moved.transfer_count == 1
    transfer = Transfer.objects.get(case=late_case, kind="transfer")
    assert (transfer.from_queue.name, transfer.to_queue.name) == (
        "accounts_payable",
        "finance_approvals",
    )
    assert (transfer.from_user, transfer.to_user, transfer.actor) == (wendy, None, finance_lead)
    assert transfer.reason == "Needs an approver"
    assert transfer.note == "Vendor called twice about this one"
    assert transfer.draft_policy == "kept"
    assert Draft.objects.filter(case=late_case, user=wendy, note="half").exists()
    event = AuditEvent.objects.filter(stream=late_case.pk).latest("sequence")
    assert event.action == "case.transferred"
    assert event.after["from_queue"] == "accounts_payable"
    assert event.after["to_queue"] == "finance_approvals"
    assert event.after["due_at"] == BREACHED.isoformat()


def test_transfer_to_a_person_gives_them_the_lease_if_eligible_and_with_room(file_case_with, lead):
    case = file_case_with(required_skills={"refunds": 3})
    novice = make_worker("novice", skills={"refunds": 1})
    full = make_worker("full", skills={"refunds": 3}, capacity=0)
    expert = make_worker("expert", skills={"refunds": 3})
    claim_case(case_id=case.pk, actor=expert)

    with pytest.raises(CaseError) as ineligible:
        transfer_case(case_id=case.pk, actor=lead, to_user=novice, reason="cover")
    with pytest.raises(CaseError) as no_room:
        transfer_case(case_id=case.pk, actor=lead, to_user=full, reason="cover")

    assert ineligible.value.kind == "invalid"
    assert ineligible.value.fields["to_user"] == [
        "novice is not eligible: needs skill refunds ≥ 3 (has 1)."
    ]
    assert no_room.value.kind == "conflict"
    assert Case.objects.get(pk=case.pk).assignee == expert
    specialist = make_worker("spec", skills={"refunds": 3})
    old_token = Case.objects.get(pk=case.pk).lease_token

    moved = transfer_case(case_id=case.pk, actor=lead, to_user=specialist, reason="Expert is out")

    assert (moved.assignee, moved.state, moved.lease_kind) == (specialist, State.CLAIMED, "push")
    assert moved.lease_token and moved.lease_token != old_token
    transfer = Transfer.objects.get(case=case)
    assert (transfer.from_user, transfer.to_user, transfer.kind) == (expert, specialist, "transfer")
    assert Case.objects.filter(assignee=expert, state=State.CLAIMED).count() == 0


@pytest.mark.parametrize("who", ["worker", "other_queue_lead", "outsider"])
def test_only_a_supervisor_of_both_queues_may_transfer(file_case_with, lead, who):
    case = file_case_with()
    actors = {
        "worker": lambda: make_worker("wendy"),
        "other_queue_lead": lambda: lead,  # supervises accounts_payable, not finance
        "outsider": lambda: make_worker("oscar", queues=("security_review",)),
    }
    actor = actors[who]()

    with pytest.raises(CaseError) as refused:
        transfer_case(case_id=case.pk, actor=actor, to_queue="finance_approvals", reason="x")

    assert refused.value.kind == ("not_found" if who == "outsider" else "forbidden")
    assert Case.objects.get(pk=case.pk).queue.name == "accounts_payable"
    assert not Transfer.objects.exists()


def test_a_system_overflow_transfer_names_its_rule_and_keeps_the_breach(late_case):
    overflow = Queue.objects.get(name="finance_approvals")
    Queue.objects.filter(name="accounts_payable").update(overflow_queue=overflow)
    before = clock_of(late_case)

    with pytest.raises(CaseError) as no_rule:
        transfer_case(case_id=late_case.pk, actor=None, to_queue="finance_approvals", reason="x")
    moved = transfer_case(
        case_id=late_case.pk,
        actor=None,
        rule="escalation:L4",
        to_queue="finance_approvals",
        reason="Past due: overflow",
    )

    assert no_rule.value.fields == {"rule": ["A system transfer names the rule that made it."]}
    assert clock_of(moved) == before
    transfer = Transfer.objects.get(case=late_case)
    assert (transfer.kind, transfer.rule, transfer.actor) == ("overflow", "escalation:L4", None)
    event = AuditEvent.objects.filter(stream=late_case.pk).latest("sequence")
    assert (event.actor_kind, event.actor_label) == ("system", "escalation:L4")


def test_a_reroute_moves_the_case_recomputes_requirements_and_counts_a_routing_defect(
    late_case,
):
    wendy = make_worker("wendy", queues=("accounts_payable",))
    claim_case(case_id=late_case.pk, actor=wendy)
    assert late_case.required_skills == []
    # The task type is configured after filing; a reroute takes its requirements.
    make_task_type(skills={"approvals": 2}, workload_weight=3, data_classification="confidential")
    before = clock_of(late_case)

    rerouted = reroute_case(
        case_id=late_case.pk,
        actor=wendy,
        to_queue="finance_approvals",
        reason="An approval, not a matching problem",
    )

    assert clock_of(rerouted) == before
    rerouted.refresh_from_db()
    assert rerouted.queue.name == "finance_approvals"
    assert (rerouted.state, rerouted.assignee) == (State.OPEN, None)
    assert rerouted.required_skills == [{"code": "approvals", "min_proficiency": 2}]
    assert (rerouted.workload_weight, rerouted.data_classification) == (3, "confidential")
    assert (rerouted.reroute_count, rerouted.transfer_count) == (1, 1)
    assert rerouted.routing_explanation.startswith("rerouted from accounts_payable by wendy")
    transfer = Transfer.objects.get(case=late_case)
    assert (transfer.kind, transfer.from_user, transfer.actor) == ("reroute", wendy, wendy)
    event = AuditEvent.objects.filter(stream=late_case.pk).latest("sequence")
    assert event.action == "case.rerouted"
    assert event.after["routing_defect"] is True
    assert event.after["requirements_before"]["workload_weight"] == 1
    assert event.after["requirements_after"]["workload_weight"] == 3


def test_a_worker_may_not_reroute_a_case_someone_else_holds(file_case_with):
    case = file_case_with()
    holder = make_worker("holder")
    wendy = make_worker("wendy")
    claim_case(case_id=case.pk, actor=holder)

    with pytest.raises(CaseError) as refused:
        reroute_case(case_id=case.pk, actor=wendy, to_queue="finance_approvals", reason="wrong")
    with pytest.raises(CaseError) as no_reason:
        reroute_case(case_id=case.pk, actor=holder, to_queue="finance_approvals", reason=" ")

    assert refused.value.kind == "forbidden"
    assert no_reason.value.kind == "invalid"
    assert Case.objects.get(pk=case.pk).reroute_count == 0


def test_skipping_an_open_case_counts_without_changing_its_version(file_case_with):
    case = file_case_with()
    wendy = make_worker("wendy")

    skipped = skip_case(case_id=case.pk, actor=wendy, reason="Not my vendor portfolio")

    assert (skipped.skip_count, skipped.version, skipped.state) == (1, case.version, State.OPEN)
    event = AuditEvent.objects.filter(stream=case.pk).latest("sequence")
    assert (event.action, event.reason) == ("case.skipped", "Not my vendor portfolio")
    assert not Transfer.objects.filter(case=case).exists()


def test_skipping_a_held_case_returns_it_and_records_the_release(file_case_with):
    case = file_case_with()
    wendy = make_worker("wendy")
    claim_case(case_id=case.pk, actor=wendy)

    skipped = skip_case(case_id=case.pk, actor=wendy, reason="Conflict of interest")

    assert (skipped.state, skipped.assignee, skipped.skip_count) == (State.OPEN, None, 1)
    assert skipped.release_count == 0  # a skip is counted as a skip, not a release
    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.rule, transfer.from_user) == ("release", "skip", wendy)


def test_a_release_is_counted_and_recorded(file_case_with):
    case = file_case_with()
    wendy = make_worker("wendy")
    held = claim_case(case_id=case.pk, actor=wendy)

    released = release_case(case_id=case.pk, actor=wendy, lease_token=held.lease_token)

    assert (released.release_count, released.transfer_count) == (1, 0)
    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.from_user, transfer.actor) == ("release", wendy, wendy)
    assert transfer.reason == "released by worker"
