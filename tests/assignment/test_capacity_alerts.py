"""'No eligible worker': raised the moment a case arrives that nobody on shift can take,
shown to the queue's supervisors, never duplicated, cleared when someone takes the case."""

from __future__ import annotations

import pytest

from apps.cases.models import CapacityAlert, Case, Notification
from apps.cases.services import (
    cancel_case,
    check_capacity_alerts,
    claim_case,
    go_off_shift,
    raise_if_no_eligible_worker,
)
from apps.cases.services.alerts import ALERT_KIND
from apps.routing.models import WorkerSkill

from .conftest import make_task_type, make_worker


@pytest.fixture
def refunds_task(reference_data):
    """Evidence-conflict invoice cases need skill refunds >= 3."""
    return make_task_type(skills={"refunds": 3})


def open_alerts(case: Case):
    return CapacityAlert.objects.filter(case=case, cleared_at__isnull=True)


def test_a_case_nobody_on_shift_can_take_raises_an_alert_when_it_is_filed(
    refunds_task, file_case_with, lead
):
    make_worker("wendy", skills={"refunds": 2})
    make_worker("walter", skills={"refunds": 4}, on_shift=False)

    case = file_case_with()

    alert = open_alerts(case).get()
    assert alert.queue.name == "accounts_payable"
    assert alert.explanation.startswith("No eligible worker on shift: ")
    assert "walter is off shift; needs skill refunds ≥ 3" not in alert.explanation
    assert "walter is off shift" in alert.explanation
    assert "wendy needs skill refunds ≥ 3 (has 2)" in alert.explanation
    notice = Notification.objects.get(user=lead, case=case)
    assert notice.kind == ALERT_KIND
    assert case.pk in notice.message and "wendy needs skill refunds" in notice.message


def test_no_alert_while_someone_eligible_with_room_is_on_shift(refunds_task, file_case_with):
    make_worker("wendy", skills={"refunds": 3})

    case = file_case_with()

    assert not CapacityAlert.objects.filter(case=case).exists()


def test_eligible_workers_who_are_all_full_count_as_no_eligible_worker(
    reference_data, file_case_with
):
    wendy = make_worker("wendy", capacity=1)
    claim_case(case_id=file_case_with().pk, actor=wendy)

    case = file_case_with()

    assert "wendy is at capacity (1 of 1 units)" in open_alerts(case).get().explanation


def test_raising_again_returns_the_open_alert_and_notifies_once(refunds_task, file_case_with, lead):
    case = file_case_with()
    first = open_alerts(case).get()

    assert raise_if_no_eligible_worker(case=case) == first
    assert check_capacity_alerts() == 0
    assert CapacityAlert.objects.filter(case=case).count() == 1
    assert Notification.objects.filter(user=lead, case=case).count() == 1


def test_the_alert_is_cleared_when_someone_eligible_claims_the_case(refunds_task, file_case_with):
    case = file_case_with()
    assert open_alerts(case).exists()
    wendy = make_worker("wendy", skills={"refunds": 3})

    claim_case(case_id=case.pk, actor=wendy)

    alert = CapacityAlert.objects.get(case=case)
    assert alert.cleared_at is not None


def test_the_only_eligible_worker_going_off_shift_raises_alerts_for_the_cases_they_return(
    refunds_task, file_case_with
):
    wendy = make_worker("wendy", skills={"refunds": 3})
    case = file_case_with()
    claim_case(case_id=case.pk, actor=wendy)
    assert not CapacityAlert.objects.exists()

    go_off_shift(worker=wendy, actor=wendy)

    assert "wendy is off shift" in open_alerts(case).get().explanation


def test_the_sweep_raises_for_open_cases_nobody_can_take_now_and_clears_taken_ones(
    reference_data, api_source, file_case_with
):
    wendy = make_worker("wendy", skills={"refunds": 3})
    needs_skill = file_case_with(required_skills={"refunds": 3})
    plain = file_case_with()
    canceled = file_case_with(required_skills={"refunds": 5})
    raise_if_no_eligible_worker(case=canceled)
    assert open_alerts(canceled).exists()
    cancel_case(source=api_source[0], case_id=canceled.pk, reason="duplicate invoice")
    # Wendy's proficiency drops: nobody can take the skill case any more.
    WorkerSkill.objects.filter(profile__user=wendy).update(proficiency=2)

    assert check_capacity_alerts() == 1

    assert open_alerts(needs_skill).exists()
    assert not open_alerts(plain).exists()
    assert not open_alerts(canceled).exists()  # the case left open work: alert cleared
    assert check_capacity_alerts() == 0  # nothing new the second time


def test_a_quarantined_case_raises_no_alert(reference_data, file_case_with):
    case = file_case_with(workflow_version="9")  # unsupported: quarantined, not for workers

    assert case.state == "quarantined"
    assert raise_if_no_eligible_worker(case=case) is None
    assert not CapacityAlert.objects.exists()


@pytest.mark.threaded
@pytest.mark.django_db(transaction=True)
def test_two_processes_raising_at_once_make_one_alert(refunds_task, file_case_with):
    from tests.concurrency.threads import run_at_once

    case = file_case_with()
    CapacityAlert.objects.all().delete()

    outcomes = run_at_once([lambda: raise_if_no_eligible_worker(case=case) for _ in range(4)])

    assert all(isinstance(alert, CapacityAlert) for alert in outcomes), outcomes
    assert len({alert.pk for alert in outcomes}) == 1
    assert CapacityAlert.objects.filter(case=case).count() == 1
