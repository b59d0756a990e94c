"""Eight 'Next case' requests at the same instant, in real threads with their own database
connections: no case goes to two workers and no worker ends up over capacity."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db.models import Sum

from apps.cases.errors import CaseError
from apps.cases.models import Case, State, Transfer
from apps.cases.services import next_case
from apps.routing.models import Queue
from tests.concurrency.threads import run_at_once

from .conftest import make_worker

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

CALLERS = 8


def held_units(user) -> int:
    return (
        Case.objects.filter(state=State.CLAIMED, assignee=user).aggregate(u=Sum("workload_weight"))[
            "u"
        ]
        or 0
    )


@pytest.fixture
def push_queue(reference_data):
    Queue.objects.filter(name="accounts_payable").update(
        assignment_model="priority_push", push_concurrency_cap=20
    )


def test_eight_parallel_requests_of_one_worker_never_exceed_their_capacity(
    push_queue, file_case_with
):
    wendy = make_worker("wendy", capacity=5)
    # Mixed weights: 2+2+1 = 5 fits, any further case would overshoot.
    cases = [file_case_with(workload_weight=2 if n % 2 else 1) for n in range(12)]

    outcomes = run_at_once([lambda: next_case(actor=wendy) for _ in range(CALLERS)])

    handed = [o for o in outcomes if isinstance(o, Case)]
    refused = [o for o in outcomes if isinstance(o, CaseError)]
    assert len(handed) + len(refused) + outcomes.count(None) == CALLERS, outcomes
    assert all(error.kind == "conflict" for error in refused), refused
    assert len({case.pk for case in handed}) == len(handed)  # no case handed out twice
    assert held_units(wendy) <= 5
    assert held_units(wendy) >= 4  # they did get work: the lock queues, it does not refuse
    assert Case.objects.filter(pk__in=[c.pk for c in cases], state=State.CLAIMED).count() == len(
        handed
    )


def test_eight_workers_asking_at_once_each_get_a_different_case(push_queue, file_case_with):
    workers = [make_worker(f"worker{n}", capacity=2) for n in range(CALLERS)]
    cases = [file_case_with() for _ in range(5)]

    outcomes = run_at_once([lambda user=user: next_case(actor=user) for user in workers])

    assert not any(isinstance(o, BaseException) for o in outcomes), outcomes
    handed = [o for o in outcomes if o is not None]
    assert len(handed) == 5  # every case went out, three callers found nothing left
    assert Counter(case.pk for case in handed) == Counter(case.pk for case in cases)
    for user, outcome in zip(workers, outcomes, strict=True):
        if outcome is not None:
            assert Case.objects.get(pk=outcome.pk).assignee_id == user.pk
    pushes = Counter(Transfer.objects.filter(kind="push").values_list("case_id", flat=True))
    assert pushes == Counter(case.pk for case in cases)  # one push row per case
    assert all(held_units(user) <= 2 for user in workers)
