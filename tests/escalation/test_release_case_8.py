"""Release case 8 of DESIGN.md, end to end: an expired case escalates without changing the
underlying business decision.

A refund workflow files two policy-denied refunds through the REST API. One is denied by a
finance worker on the decision page before it is due; the other is left to run out of time
while every beat sweep runs, several times, at each step of the clock. The late one climbs
the whole ladder once per level (reminder, supervisor alert, priority bump, overflow,
control owner) and is never decided by it; the denied one stays denied, and the workflow
learns "deny" and nothing else."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.urls import reverse
from rest_framework.test import APIClient

from apps.audit.services import verify
from apps.cases import tasks
from apps.cases.models import Case, Decision, Escalation, OutboxEvent, State, Transfer
from apps.routing.models import ExceptionClass, Queue, WorkerProfile
from tests.conftest import invoice_packet, make_user
from tests.pages.conftest import hidden_value

from .conftest import LEVELS, SUPERVISE, install_ladder

START = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)  # a Tuesday morning

# Every sweep Celery beat runs (config/settings/base.py CELERY_BEAT_SCHEDULE), called the
# way a worker calls them.
BEAT_TASKS = [
    tasks.expire_leases_task,
    tasks.expire_waits_task,
    tasks.refresh_priorities_task,
    tasks.relay_due_events_task,
    tasks.escalate_due_cases_task,
    tasks.expire_overrides_task,
    tasks.lapse_capacity_adjustments_task,
    tasks.end_shifts_task,
    tasks.assign_pushed_cases_task,
    tasks.check_capacity_alerts_task,
]


def refund_packet(instance: str) -> dict[str, Any]:
    return invoice_packet(
        workflow_type="refund_approval",
        workflow_version="3",
        workflow_instance_id=instance,
        **{"class": "policy_denied", "reason_code": "over_limit"},
    )


def run_every_sweep(times: int = 3) -> None:
    for _ in range(times):
        for task in BEAT_TASKS:
            task()


@pytest.fixture
def finance(reference_data: None, supervisor: Any, control_owner: Any) -> dict[str, Any]:
    """The finance team: a worker, the queue's supervisor (sam), an overflow queue with its
    own supervisor, and the control owner of policy denials."""
    fiona = make_user(
        "fiona", role="worker", queues={"finance_approvals": ["view_queue", "work_queue"]}
    )
    fiona.email = "fiona@example.test"
    fiona.save(update_fields=["email"])
    WorkerProfile.objects.filter(user=fiona).update(amount_limit=Decimal("50000"))
    supervisor.email = "sam@example.test"
    supervisor.save(update_fields=["email"])
    overflow = Queue.objects.create(name="finance_overflow", display_name="Finance overflow")
    Queue.objects.filter(name="finance_approvals").update(overflow_queue=overflow)
    otto = make_user(
        "otto", role="supervisor", queues={"finance_overflow": SUPERVISE}, clearance="restricted"
    )
    otto.email = "otto@example.test"
    otto.save(update_fields=["email"])
    install_ladder("policy_denied")
    ExceptionClass.objects.filter(code="policy_denied").update(control_owner=control_owner)
    return {"fiona": fiona, "sam": supervisor, "otto": otto, "carla": control_owner}


def test_8_an_expired_case_escalates_without_changing_the_business_decision(
    api_source, finance, browser_of, django_capture_on_commit_callbacks
):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_source[1]}")
    fiona = browser_of(finance["fiona"])

    with time_machine.travel(START, tick=False) as clock:
        late_id = api.post("/api/v1/cases", refund_packet("wf_refund_late"), format="json")
        denied_id = api.post("/api/v1/cases", refund_packet("wf_refund_denied"), format="json")
        assert (late_id.status_code, denied_id.status_code) == (201, 201)
        late = Case.objects.get(pk=late_id.json()["id"])
        denied = Case.objects.get(pk=denied_id.json()["id"])
        assert late.queue.name == denied.queue.name == "finance_approvals"
        target = late.due_at - late.created_at

        # Before it is due, fiona denies one refund on the decision page.
        clock.move_to(START + timedelta(minutes=10))
        assert fiona.post(reverse("cases:claim", args=[denied.pk])).status_code == 302
        page = fiona.get(reverse("cases:detail", args=[denied.pk])).content.decode()
        form = {
            name: hidden_value(page, name)
            for name in ("expected_version", "lease_token", "evidence_digest", "resolution_id")
        }
        decided = fiona.post(
            reverse("cases:decide", args=[denied.pk]),
            {**form, "resolution": "deny", "note": "Over the refund limit.", "confirm": "1"},
        )
        assert decided.status_code in (200, 302), decided.content
        denied.refresh_from_db()
        assert denied.state == State.RESOLUTION_PENDING
        assert denied.decision.resolution == "deny"

        # She picks up the other one shortly before half its time is gone, then walks away.
        clock.move_to(START + target * 0.5 - timedelta(minutes=5))
        assert fiona.post(reverse("cases:claim", args=[late.pk])).status_code == 302

        with django_capture_on_commit_callbacks(execute=True):
            for percent in (50, 25, 0, -50, -100, -1000):
                clock.move_to(late.due_at - target * (percent / 100) + timedelta(minutes=1))
                run_every_sweep()
            clock.move_to(late.due_at + timedelta(days=2))  # the bump's day is over
            run_every_sweep()

    late.refresh_from_db()
    denied.refresh_from_db()

    # The late case: every level once, in order, and still undecided work.
    fired = list(Escalation.objects.filter(case=late).order_by("level"))
    assert [e.level for e in fired] == LEVELS
    assert late.escalation_level == max(LEVELS)
    assert late.state == State.OPEN  # the lapsed lease returned it; nobody decided it
    assert not Decision.objects.filter(case=late).exists()
    assert not OutboxEvent.objects.filter(case=late).exists()
    assert late.breached_at == late.original_due_at == late.created_at + target
    assert late.queue.name == "finance_overflow"
    assert (
        Transfer.objects.filter(case=late, to_queue__name="finance_overflow").values_list(
            "rule", flat=True
        )
    ).get() == "escalation L4"
    # L3 asked for a higher band: a late policy denial is at the top band by then, and stays
    # there on the policy's own account once any bump has lapsed.
    assert fired[2].detail["to_band"] == "P1"
    assert (late.priority_band, late.priority_override_band) == ("P1", "")

    # Who heard about it, once per level each, in the app and by e-mail.
    heard = Counter((n.user.username, n.kind) for n in late.notifications.all())
    assert heard == Counter(
        {
            ("fiona", "escalation.reminder"): 1,  # L1, to the worker holding it then
            ("sam", "escalation.supervisor_alert"): 1,  # L2
            ("otto", "escalation.overflow"): 1,  # L4, the overflow queue's supervisor
            ("carla", "escalation.control_owner"): 1,  # L5
        }
    )
    mailed = Counter(message.to[0] for message in mail.outbox if late.case_ref in message.subject)
    assert mailed == Counter(
        {
            "fiona@example.test": 1,
            "sam@example.test": 1,
            "otto@example.test": 1,
            "carla@example.test": 1,
        }
    )

    # The denied case: untouched by every sweep, and the workflow learns "deny", once.
    assert denied.state == State.RESOLUTION_PENDING
    assert Decision.objects.get(case=denied).resolution == "deny"
    assert not Escalation.objects.filter(case=denied).exists()
    assert denied.breached_at is None
    events = list(OutboxEvent.objects.filter(case=denied))
    assert [(e.type, e.body["data"]["resolution"]) for e in events] == [("case.decided", "deny")]
    feed = api.get("/api/v1/decisions").json()["events"]
    assert [(item["data"]["case_id"], item["data"]["resolution"]) for item in feed] == [
        (denied.pk, "deny")
    ]
    assert list(verify([late.pk, denied.pk])) == []
