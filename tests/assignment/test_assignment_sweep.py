"""The assignment sweep for queues that auto-assign: round robin, highest free capacity,
continuity with backup and age-based release, and the urgent part of a blend."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.models import Case, State, Transfer
from apps.cases.services import assign_pushed_cases, claim_case
from apps.routing.models import Queue, WorkerProfile
from tests.delivery.helpers import decide

from .conftest import make_worker

BASE = timezone.now().replace(microsecond=0)


def configure(**fields) -> None:
    Queue.objects.filter(name="accounts_payable").update(push_concurrency_cap=50, **fields)


def owners(cases) -> list[str]:
    return [
        Case.objects.select_related("assignee").get(pk=case.pk).assignee.username
        if Case.objects.get(pk=case.pk).assignee_id
        else None
        for case in cases
    ]


def in_order(file_case_with, count, **fields):
    """Cases whose priority order is their creation order."""
    return [
        file_case_with(priority_band="P3", due_at=BASE + timedelta(minutes=n), **fields)
        for n in range(count)
    ]


def test_round_robin_deals_cases_to_the_least_recently_assigned_worker(
    reference_data, file_case_with
):
    configure(assignment_model="round_robin")
    make_worker("ann", last_assigned_at=BASE - timedelta(hours=1))
    make_worker("bob", last_assigned_at=BASE - timedelta(hours=3))
    make_worker("cid")  # never assigned: first
    cases = in_order(file_case_with, 7)

    assert assign_pushed_cases(now=BASE) == 7

    assert owners(cases) == ["cid", "bob", "ann", "cid", "bob", "ann", "cid"]
    # The next run carries on where this one stopped.
    more = in_order(file_case_with, 2)
    assign_pushed_cases(now=BASE + timedelta(minutes=1))
    assert owners(more) == ["bob", "ann"]


def test_round_robin_skips_workers_who_are_full_ineligible_or_off_shift(
    reference_data, file_case_with
):
    configure(assignment_model="round_robin")
    make_worker("ann", capacity=1)
    make_worker("bob", skills={"refunds": 3})
    make_worker("cid", on_shift=False)
    cases = in_order(file_case_with, 2, required_skills={"refunds": 1})
    plain = in_order(file_case_with, 2)

    assign_pushed_cases(now=BASE)

    assert owners(cases) == ["bob", "bob"]  # only bob has the skill
    assert owners(plain) == ["ann", "bob"]  # ann's one unit, then bob again
    assert Case.objects.filter(assignee__username="cid").count() == 0


def test_highest_capacity_gives_each_case_to_the_worker_with_most_free_units(
    reference_data, file_case_with
):
    configure(assignment_model="highest_capacity")
    make_worker("ann", capacity=3)
    make_worker("bob", capacity=5)
    cid = make_worker("cid", capacity=6)
    claim_case(case_id=file_case_with(queue="accounts_payable").pk, actor=cid)  # 5 free
    Case.objects.filter(assignee=cid).update(lease_kind="pull")
    cases = in_order(file_case_with, 6)

    assign_pushed_cases(now=BASE)

    # Free units before each case: ann 3, bob 5, cid 5 -> ties go by name.
    assert owners(cases) == ["bob", "cid", "bob", "cid", "ann", "bob"]
    for user, expected_load in (("ann", 1), ("bob", 3), ("cid", 3)):
        assert Case.objects.filter(assignee__username=user, state=State.CLAIMED).count() == (
            expected_load
        )


def test_continuity_sends_a_case_to_the_worker_who_handled_the_entity(
    reference_data, file_case_with
):
    configure(assignment_model="fifo_pull")
    ann = make_worker("ann")
    make_worker("bob", last_assigned_at=BASE - timedelta(days=1))
    earlier = file_case_with(case_ref="vendor-acme-4411")
    claim_case(case_id=earlier.pk, actor=ann)
    decide(earlier, ann)
    configure(assignment_model="continuity", continuity_release_minutes=60)
    related = file_case_with(case_ref="vendor-acme-4411")
    unrelated = file_case_with(case_ref="vendor-other-1")

    assign_pushed_cases(now=timezone.now())

    assert owners([related, unrelated]) == ["ann", "bob"]
    transfer = Transfer.objects.get(case=related)
    assert (transfer.kind, transfer.rule, transfer.actor) == ("push", "assignment:continuity", None)


def test_continuity_holds_the_case_for_a_while_then_releases_it_to_a_backup(
    reference_data, file_case_with
):
    configure(assignment_model="fifo_pull")
    ann = make_worker("ann", capacity=1)
    make_worker("bob")
    earlier = file_case_with(case_ref="vendor-acme-4411")
    claim_case(case_id=earlier.pk, actor=ann)
    decide(earlier, ann)
    claim_case(case_id=file_case_with(case_ref="other").pk, actor=ann)  # ann is now full
    configure(assignment_model="continuity", continuity_release_minutes=60)
    related = file_case_with(case_ref="vendor-acme-4411")
    filed = related.created_at

    with time_machine.travel(filed + timedelta(minutes=30), tick=False):
        assert assign_pushed_cases() == 0  # held for ann, who knows the vendor
    assert owners([related]) == [None]
    with time_machine.travel(filed + timedelta(minutes=61), tick=False):
        assert assign_pushed_cases() == 1  # older than the release time: backup takes it
    assert owners([related]) == ["bob"]


def test_a_blend_queue_pushes_urgent_bands_and_leaves_the_rest_for_the_list(
    reference_data, file_case_with
):
    configure(assignment_model="blend", push_bands=["P1"])
    make_worker("ann")
    urgent = file_case_with(priority_band="P1")
    routine = file_case_with(priority_band="P3")

    assert assign_pushed_cases(now=BASE) == 1

    assert owners([urgent, routine]) == ["ann", None]


def test_the_sweep_respects_the_push_cap_and_leaves_the_rest_open(reference_data, file_case_with):
    configure(assignment_model="round_robin")
    Queue.objects.filter(name="accounts_payable").update(push_concurrency_cap=2)
    make_worker("ann")
    cases = in_order(file_case_with, 3)

    assert assign_pushed_cases(now=BASE) == 2

    assert owners(cases) == ["ann", "ann", None]
    audit = AuditEvent.objects.filter(stream=cases[0].pk, action="case.claimed").get()
    assert audit.actor_label == "assignment-sweep"
    # The second hand-out of the run is stamped after the first (same `now`, order kept).
    last = WorkerProfile.objects.get(user__username="ann").last_assigned_at
    assert BASE < last < BASE + timedelta(seconds=1)


def test_fifo_and_priority_push_queues_are_left_to_the_workers(reference_data, file_case_with):
    make_worker("ann")
    pull = file_case_with()
    configure(assignment_model="priority_push")
    push = file_case_with()

    assert assign_pushed_cases(now=BASE) == 0
    assert owners([pull, push]) == [None, None]


@pytest.mark.threaded
@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_assign_each_case_once_within_capacity(reference_data, file_case_with):
    from tests.concurrency.threads import run_at_once

    configure(assignment_model="round_robin")
    workers = [make_worker(name, capacity=3) for name in ("ann", "bob", "cid")]
    cases = in_order(file_case_with, 12)

    outcomes = run_at_once([lambda: assign_pushed_cases(now=BASE) for _ in range(2)])

    assert all(isinstance(count, int) for count in outcomes), outcomes
    assert sum(outcomes) == 9  # three workers, three units each
    claimed = Case.objects.filter(pk__in=[c.pk for c in cases], state=State.CLAIMED)
    assert claimed.count() == 9
    assert Counter(claimed.values_list("assignee__username", flat=True)) == Counter(
        {"ann": 3, "bob": 3, "cid": 3}
    )
    pushes = Counter(Transfer.objects.filter(kind="push").values_list("case_id", flat=True))
    assert set(pushes.values()) == {1}  # no case handed out twice
    assert len(workers) == 3
