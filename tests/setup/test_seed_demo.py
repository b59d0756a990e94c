"""`manage.py seed_demo`: the demo desk `make run` starts from. Idempotent, every state, every
role, and a history the audit chain vouches for."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases import demo
from apps.cases.access import can_view, can_work
from apps.cases.models import (
    Case,
    CloseReason,
    Decision,
    DeliveryAttempt,
    DeliveryStatus,
    EvidenceItem,
    OutboxEvent,
    SideEffectState,
    State,
)
from apps.cases.services.delivery import unacknowledged_events
from apps.routing.models import ExceptionClass, Queue, RoutingRule
from apps.workflows.models import ApiKey, ApiSource, WorkflowType

pytestmark = pytest.mark.django_db

ROLES = ["worker", "supervisor", "auditor", "quality_reviewer", "admin"]


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", "--allow-no-debug", stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    models = [
        Case,
        EvidenceItem,
        Decision,
        OutboxEvent,
        DeliveryAttempt,
        AuditEvent,
        User,
        WorkflowType,
        ApiSource,
        ApiKey,
        RoutingRule,
    ]
    return {model.__name__: model.objects.count() for model in models}


def test_seeding_twice_changes_nothing():
    seed()
    first = counts()
    states = dict(Case.objects.values_list("id", "state"))
    output = seed()
    assert counts() == first
    assert dict(Case.objects.values_list("id", "state")) == states
    assert "nothing changed" in output
    assert first["Case"] >= 55


def test_seeded_cases_cover_every_state_queue_and_class():
    seed()
    assert set(Case.objects.values_list("state", flat=True)) == {s.value for s in State}
    assert set(Case.objects.values_list("queue__name", flat=True)) == set(
        Queue.objects.values_list("name", flat=True)
    )
    assert set(Case.objects.values_list("exception_class__code", flat=True)) == set(
        ExceptionClass.objects.values_list("code", flat=True)
    )
    pending = Case.objects.filter(state=State.RESOLUTION_PENDING)
    assert pending.filter(delivery_status=DeliveryStatus.PENDING).exists()
    assert pending.filter(delivery_status=DeliveryStatus.FAILED).exists()  # recovery queue
    quarantined = Case.objects.filter(state=State.QUARANTINED)
    assert set(quarantined.values_list("workflow_version", flat=True)) == {"15"}
    assert set(quarantined.values_list("queue__name", flat=True)) == {"platform"}
    closed = Case.objects.filter(state=State.CLOSED)
    assert set(closed.values_list("close_reason", flat=True)) == {CloseReason.CANCELED_BY_WORKFLOW}
    assert Case.objects.filter(side_effect_state=SideEffectState.UNKNOWN).exists()
    classifications = set(EvidenceItem.objects.values_list("classification", flat=True))
    assert {"restricted", "confidential"} <= classifications


def test_claimed_cases_hold_live_leases_and_decided_cases_have_their_decision():
    seed()
    for case in Case.objects.filter(state=State.CLAIMED):
        assert case.lease_token and case.assignee_id
        assert can_work(case.assignee, case.queue)
    decided = Case.objects.filter(state__in=[State.RESOLUTION_PENDING, State.RESOLVED])
    assert decided.count() == Decision.objects.count()
    for case in decided:
        assert case.decision.actor.has_perm("routing.work_queue", case.queue)
    failed = OutboxEvent.objects.filter(case__delivery_status=DeliveryStatus.FAILED)
    for event in failed:
        assert event.attempt_log.count() == event.attempts >= 1


def test_every_role_has_a_demo_user_who_can_sign_in(client):
    seed()
    for role in ROLES:
        users = User.objects.filter(groups__name=role)
        assert users.exists(), role
        assert client.login(username=users.first().username, password=demo.DEMO_PASSWORD)
        client.logout()
    assert User.objects.get(username="ada").is_superuser
    assert Group.objects.filter(name__in=ROLES).count() == len(ROLES)


def test_demo_users_see_only_their_queues():
    seed()
    wendy = User.objects.get(username="wendy")
    alice = User.objects.get(username="alice")
    accounts_payable = Queue.objects.get(name="accounts_payable")
    security_review = Queue.objects.get(name="security_review")
    assert can_work(wendy, accounts_payable)
    assert not can_view(wendy, security_review)
    assert all(can_view(alice, queue) for queue in Queue.objects.all())
    assert not can_work(alice, accounts_payable)


def test_pull_only_type_keeps_decisions_in_the_feed_and_webhook_types_use_the_receiver():
    seed()
    refund = WorkflowType.objects.get(name="refund_approval")
    assert refund.callback_url == ""
    feed = unacknowledged_events(source=ApiSource.objects.get(name="refunds-agent"))
    assert any(event.type == "case.decided" for event in feed)
    invoice = WorkflowType.objects.get(name="invoice_match")
    assert invoice.callback_url == "http://127.0.0.1:8000/demo/webhooks/invoice_match/"
    assert invoice.supported_versions == ["16", "17"]
    assert ApiSource.objects.get(name=demo.SIMULATOR_SOURCE).is_test
    assert not ApiKey.objects.exists()  # the seed issues no key, so it prints no secret


def test_audit_chain_is_intact_and_tells_each_case_from_its_filing():
    seed()
    assert list(verify()) == []
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert "intact" in out.getvalue()
    first_actions = {
        event.stream: event.action
        for event in AuditEvent.objects.filter(sequence=1, stream__startswith="exc_")
    }
    assert len(first_actions) == Case.objects.count()
    assert set(first_actions.values()) == {"case.filed"}
    decided = AuditEvent.objects.filter(action="case.decided").values_list("stream", flat=True)
    assert set(decided) == set(Decision.objects.values_list("case_id", flat=True))


def test_seed_refuses_to_publish_a_password_without_debug():
    with pytest.raises(CommandError, match="DEBUG"):
        call_command("seed_demo", stdout=StringIO())
    assert not User.objects.exists()


def test_seed_prints_every_demo_login_and_the_password():
    output = seed()
    assert demo.DEMO_PASSWORD in output
    for user in demo.USERS:
        assert f"  {user.username} " in output
