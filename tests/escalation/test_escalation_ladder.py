"""The escalation ladder: each level fires once, when the time left falls to its share of the
service target and the case's impact is high enough; it notifies, bumps and steers, and
never decides anything."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine
from django.core import mail

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.models import Case, Decision, Escalation, OutboxEvent, State
from apps.cases.services import (
    claim_case,
    escalate_due_cases,
    expire_overrides,
    request_information,
)
from apps.cases.services.common import refresh_priority
from apps.cases.services.overrides import BANDS
from apps.routing.models import (
    BusinessCalendar,
    EscalationStep,
    ExceptionClass,
    Queue,
    Severity,
)
from tests.delivery.helpers import claim_and_decide

from .conftest import LEVELS, moment, notifications_of

SMALL = {"attributes": {"tenant": "acme-eu", "region": "eu", "amount": "10.00", "currency": "EUR"}}


def levels_of(case: Case) -> list[int]:
    return list(case.escalations.order_by("level").values_list("level", flat=True))


def test_each_level_fires_when_its_share_of_the_target_is_left_and_never_twice(
    ladder, people, file_invoice_case
):
    case = claim_case(case_id=file_invoice_case().pk, actor=people["worker"])
    expected: list[int] = []

    for percent, newly in ((60, []), (50, [1]), (25, [2]), (0, [3]), (-50, [4]), (-100, [5])):
        at = moment(case, percent)
        fired = [escalate_due_cases(now=at) for _ in range(3)]  # three beats at one instant
        assert fired == [len(newly), 0, 0], percent
        expected += newly
        assert levels_of(case) == expected, percent

    case.refresh_from_db()
    assert case.escalation_level == 5
    escalated = AuditEvent.objects.filter(stream=case.pk, action="case.escalated")
    assert [event.after["level"] for event in escalated] == LEVELS
    assert [event.actor_label for event in escalated] == ["escalation-sweep"] * 5
    assert list(verify([case.pk])) == []


def test_a_jump_past_every_threshold_fires_the_whole_ladder_in_order_once(
    ladder, people, file_invoice_case
):
    case = file_invoice_case()

    assert escalate_due_cases(now=moment(case, -500)) == 5
    assert escalate_due_cases(now=moment(case, -600)) == 0

    assert levels_of(case) == LEVELS
    fired = list(Escalation.objects.filter(case=case).order_by("level"))
    assert [e.action for e in fired] == [
        "remind_assignee",
        "alert_supervisor",
        "bump_priority",
        "transfer_overflow",
        "control_owner",
    ]


def test_the_reminder_goes_to_the_assignee_when_the_case_is_held(
    ladder, people, file_invoice_case, django_capture_on_commit_callbacks
):
    case = claim_case(case_id=file_invoice_case().pk, actor=people["worker"])

    with django_capture_on_commit_callbacks(execute=True):
        escalate_due_cases(now=moment(case, 50))

    reminders = notifications_of(people["worker"], case=case, kind="escalation.reminder")
    assert len(reminders) == 1
    assert case.case_ref in reminders[0].message and "due in" in reminders[0].message
    assert not notifications_of(people["worker2"])
    assert not notifications_of(people["supervisor"])
    assert [m.to for m in mail.outbox] == [["wendy@example.test"]]
    assert Escalation.objects.get(case=case, level=1).detail["recipients"] == ["wendy"]


def test_the_reminder_goes_to_the_queues_workers_when_nobody_holds_the_case(
    ladder, people, outsider, file_invoice_case, django_capture_on_commit_callbacks
):
    case = file_invoice_case()

    with django_capture_on_commit_callbacks(execute=True):
        escalate_due_cases(now=moment(case, 50))

    # Everyone who may work accounts_payable (the supervisor may too); the read-only viewer
    # and a worker of another queue hear nothing.
    notified = {n.user.username for n in case.notifications.filter(kind="escalation.reminder")}
    assert notified == {"wendy", "walter", "sam"}
    assert not notifications_of(people["viewer"]) and not notifications_of(outsider)
    assert sorted(m.to[0] for m in mail.outbox) == [
        "sam@example.test",
        "walter@example.test",
        "wendy@example.test",
    ]


def test_the_supervisor_alert_reaches_the_queues_supervisors_only(
    ladder, people, file_invoice_case, django_capture_on_commit_callbacks
):
    case = claim_case(case_id=file_invoice_case().pk, actor=people["worker"])
    escalate_due_cases(now=moment(case, 50))
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        assert escalate_due_cases(now=moment(case, 25)) == 1

    alerts = case.notifications.filter(kind="escalation.supervisor_alert")
    assert [n.user.username for n in alerts] == ["sam"]
    assert [m.to for m in mail.outbox] == [["sam@example.test"]]
    assert case.case_ref in mail.outbox[0].subject


def test_the_priority_bump_raises_the_band_one_step_for_a_day_by_rule(
    ladder, people, file_invoice_case
):
    case = file_invoice_case(**SMALL)
    at = moment(case, 0)

    escalate_due_cases(now=at)

    case.refresh_from_db()
    bump = Escalation.objects.get(case=case, level=3).detail
    assert bump["from_band"] != "P1", "precondition: a band to rise from"
    assert BANDS.index(bump["to_band"]) == BANDS.index(bump["from_band"]) - 1
    assert case.priority_band == case.priority_override_band == bump["to_band"]
    assert case.priority_override_by is None  # the rule, not a person
    assert case.priority_override_reason == "escalation L3"
    assert case.priority_override_expires_at == at + timedelta(hours=24)
    overridden = AuditEvent.objects.get(stream=case.pk, action="case.priority_overridden")
    assert (overridden.actor_kind, overridden.reason) == ("system", "escalation L3")

    # A day later the bump lapses and the policy's band is back.
    a_day_later = at + timedelta(hours=24, seconds=1)
    assert expire_overrides(now=a_day_later) == 1
    case.refresh_from_db()
    assert case.priority_override_band == ""
    probe = Case.objects.get(pk=case.pk)
    refresh_priority(probe, now=a_day_later)
    assert case.priority_band == probe.priority_band


def test_without_an_overflow_queue_level_4_is_recorded_and_supervisors_are_told(
    ladder, people, file_invoice_case
):
    Queue.objects.filter(name="accounts_payable").update(overflow_queue=None)
    case = file_invoice_case()

    escalate_due_cases(now=moment(case, -50))

    case.refresh_from_db()
    assert case.queue.name == "accounts_payable"
    assert not case.transfers.exists()
    level_4 = Escalation.objects.get(case=case, level=4)
    assert level_4.detail["transfer"] == "no overflow queue"
    alert = case.notifications.get(user=people["supervisor"], message__contains="L4")
    assert "no overflow queue" in alert.message


def test_the_last_level_goes_to_the_class_control_owner_or_else_the_supervisors(
    ladder, people, control_owner, file_invoice_case
):
    owned = file_invoice_case()
    ExceptionClass.objects.filter(pk=ladder.pk).update(control_owner=control_owner)
    escalate_due_cases(now=moment(owned, -100))
    assert [n.case for n in notifications_of(control_owner, kind="escalation.control_owner")] == [
        owned
    ]

    ExceptionClass.objects.filter(pk=ladder.pk).update(control_owner=None)
    unowned = file_invoice_case()
    escalate_due_cases(now=moment(unowned, -100))
    to_supervisor = unowned.notifications.filter(user=people["supervisor"], message__contains="L5")
    assert to_supervisor.count() == 1
    assert "no control owner" in to_supervisor[0].message
    assert len(notifications_of(control_owner)) == 1


def test_a_level_above_the_cases_impact_does_not_fire_but_later_levels_do(
    ladder, people, file_invoice_case
):
    case = file_invoice_case()
    ranks = list(Severity.values)
    assert case.severity != ranks[-1], "precondition: a severity to be below"
    EscalationStep.objects.filter(exception_class=ladder, level=2).update(
        min_severity=ranks[ranks.index(case.severity) + 1]
    )

    escalate_due_cases(now=moment(case, 0))

    assert levels_of(case) == [1, 3]
    assert not case.notifications.filter(kind="escalation.supervisor_alert").exists()
    case.refresh_from_db()
    assert case.escalation_level == 3


def test_the_breach_is_marked_once_at_the_due_time_and_audited(ladder, people, file_invoice_case):
    case = file_invoice_case()

    escalate_due_cases(now=case.due_at - timedelta(seconds=1))
    case.refresh_from_db()
    assert case.breached_at is None

    for minutes in (1, 2, 60):
        escalate_due_cases(now=case.due_at + timedelta(minutes=minutes))
    case.refresh_from_db()
    assert case.breached_at == case.due_at == case.original_due_at
    assert AuditEvent.objects.filter(stream=case.pk, action="case.breached").count() == 1


def test_a_decided_case_is_never_escalated(ladder, people, file_invoice_case):
    case, event = claim_and_decide(file_invoice_case(), people["worker"])

    assert escalate_due_cases(now=moment(case, -1000)) == 0

    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    assert case.breached_at is None and case.escalation_level == 0
    assert not case.escalations.exists() and not case.notifications.exists()
    assert OutboxEvent.objects.filter(case=case).count() == 1


def test_a_waiting_case_escalates_but_keeps_waiting_for_its_answer(
    ladder, people, file_invoice_case
):
    case = claim_case(case_id=file_invoice_case().pk, actor=people["worker"])
    request_information(
        case_id=case.pk,
        actor=people["worker"],
        expected_version=case.version,
        lease_token=case.lease_token,
        question="Which PO did you mean?",
        asked_of="vendor",
    )

    assert escalate_due_cases(now=moment(case, -100)) == 5

    case.refresh_from_db()
    assert case.state == State.WAITING
    assert case.waiting_on["question"] == "Which PO did you mean?"
    assert not Decision.objects.filter(case=case).exists()
    assert levels_of(case) == LEVELS


def test_time_left_counts_working_hours_so_a_weekend_neither_uses_up_nor_deepens_it(
    ladder, people, file_invoice_case
):
    calendar = BusinessCalendar.objects.create(
        name="escalation-berlin",
        time_zone="Europe/Berlin",
        working_hours={day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri")},
    )
    Queue.objects.filter(name="accounts_payable").update(
        calendar=calendar, service_target_minutes=240
    )
    with time_machine.travel(datetime(2026, 9, 4, 10, 0, tzinfo=UTC), tick=False):  # Fri 12:00
        case = file_invoice_case()
    assert case.due_at == datetime(2026, 9, 4, 14, 0, tzinfo=UTC)  # Fri 16:00 in Berlin

    # Friday 17:00 in Berlin: one working hour overdue, a quarter of the target: L1 to L3.
    assert escalate_due_cases(now=datetime(2026, 9, 4, 15, 0, 1, tzinfo=UTC)) == 3
    # The weekend adds no working time: still a quarter overdue on Monday at 08:59.
    assert escalate_due_cases(now=datetime(2026, 9, 7, 6, 59, tzinfo=UTC)) == 0
    # Monday 10:00: two working hours overdue, half the target: L4 (overflow).
    assert escalate_due_cases(now=datetime(2026, 9, 7, 8, 0, 1, tzinfo=UTC)) == 1
    assert levels_of(case) == [1, 2, 3, 4]


def test_level_4_moves_the_case_to_overflow_keeping_its_age_due_time_and_breach(
    ladder, people, overflow_supervisor, file_invoice_case, django_capture_on_commit_callbacks
):
    case = claim_case(case_id=file_invoice_case().pk, actor=people["worker"])

    with django_capture_on_commit_callbacks(execute=True):
        escalate_due_cases(now=moment(case, 0))
        assert escalate_due_cases(now=moment(case, -50)) == 1

    moved = Case.objects.get(pk=case.pk)
    assert moved.queue.name == "ap_overflow"
    assert (moved.created_at, moved.original_due_at) == (case.created_at, case.original_due_at)
    assert moved.breached_at == case.original_due_at
    transfer = moved.transfers.get()
    assert (transfer.kind, transfer.from_queue.name, transfer.to_queue.name) == (
        "overflow",
        "accounts_payable",
        "ap_overflow",
    )
    assert (transfer.actor, transfer.rule) == (None, "escalation L4")
    assert Escalation.objects.get(case=case, level=4).detail["transfer"] == "transferred"
    arrived = notifications_of(overflow_supervisor, kind="escalation.overflow")
    assert [n.case_id for n in arrived] == [case.pk]
    assert "ap_overflow" not in arrived[0].message  # people read display names
    assert "Accounts payable overflow" in arrived[0].message
    assert not Decision.objects.filter(case=case).exists()


def test_an_overflow_transfer_left_pending_by_a_dead_sweep_is_finished_by_a_later_one(
    ladder, people, overflow_queue, file_invoice_case
):
    case = file_invoice_case()
    fired_at = moment(case, -50)
    # The sweep that fired L4 died after its commit and before the transfer ran.
    Escalation.objects.create(
        case=case,
        level=4,
        action="transfer_overflow",
        fired_at=fired_at,
        detail={"transfer": "pending", "from_queue": "accounts_payable", "to_queue": "ap_overflow"},
    )

    escalate_due_cases(now=fired_at + timedelta(minutes=5))  # it may still be running
    assert Case.objects.get(pk=case.pk).queue.name == "accounts_payable"

    escalate_due_cases(now=fired_at + timedelta(minutes=11))
    escalate_due_cases(now=fired_at + timedelta(minutes=12))
    case.refresh_from_db()
    assert case.queue.name == "ap_overflow"
    assert case.transfers.count() == 1
    assert Escalation.objects.get(case=case, level=4).detail["transfer"] == "transferred"


def test_a_breach_is_marked_even_when_every_level_of_the_ladder_has_already_fired(
    people, file_invoice_case
):
    short = ExceptionClass.objects.get(code="evidence_conflict")
    short.escalation_steps.all().delete()
    EscalationStep.objects.create(
        exception_class=short, level=1, action="remind_assignee", remaining_percent=50
    )
    case = file_invoice_case()
    assert escalate_due_cases(now=moment(case, 50)) == 1

    escalate_due_cases(now=case.due_at + timedelta(seconds=1))

    case.refresh_from_db()
    assert case.breached_at == case.due_at
    assert levels_of(case) == [1]
