"""Seed the demo desk through the lifecycle services.

The cases' history is laid out over the past few days: each step runs under a simulated
clock (``timezone.now`` patched for the duration of one service call, as time-machine does
in tests) so ages, due times, breaches and delivery attempts look like a working desk. Only
claims that must still be live are made at the real time. Idempotent: what exists is left
alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from unittest import mock

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone
from guardian.shortcuts import assign_perm

from apps.audit.models import AuditEvent
from apps.audit.services import Actor, record
from apps.cases.services import refresh_priorities
from apps.routing.models import Queue, RoutingRule, Skill, WorkerProfile, WorkerSkill
from apps.routing.reference import ensure_demo_routing, ensure_reference_data
from apps.workflows.models import ApiSource, WorkflowType

from ..models import Case, DeliveryStatus, OutboxEvent, OutboxStatus, State
from ..services import (
    ack_event,
    cancel_case,
    claim_case,
    decide_case,
    file_case,
    reconcile_side_effect,
    request_information,
    save_draft,
)
from ..services.delivery import _record_attempt
from ..services.filing import dedupe_key_for
from .catalogue import (
    DEMO_PASSWORD,
    EVERY_QUEUE,
    ONBOARDING_RULE,
    SOURCE_OF_TYPE,
    SOURCES,
    USERS,
    WORKFLOW_TYPES,
    DemoCase,
    Plan,
    demo_cases,
    demo_packet,
    receiver_url,
)

SEED_ACTOR = Actor.system("seed_demo")


@contextmanager
def _clock(at: datetime) -> Iterator[None]:
    """Run one service call as if it were ``at``."""
    with mock.patch("django.utils.timezone.now", return_value=at):
        yield


@dataclass
class SeedReport:
    created: dict[str, int] = field(default_factory=dict)

    def add(self, what: str) -> None:
        self.created[what] = self.created.get(what, 0) + 1


def seed(*, base_url: str) -> SeedReport:
    """Create what is missing; leave what exists alone. Safe to run any number of times."""
    report = SeedReport()
    ensure_reference_data()
    _ensure_workflow_types(base_url, report)
    ensure_demo_routing()  # task types (skills, weights) and queue calendars
    _ensure_sources(report)
    _ensure_onboarding_rule(report)
    _ensure_users(report)
    users = {u.username: u for u in User.objects.filter(username__in=[d.username for d in USERS])}
    sources = {s.name: s for s in ApiSource.objects.all()}
    now = timezone.now()
    for demo_case in demo_cases():
        if _seed_case(demo_case, users, sources, now):
            report.add("cases")
    # The cases were filed in the past: bring their priority up to now, as the beat's
    # ageing sweep would within a minute of `make run` starting.
    refresh_priorities()
    return report


def _ensure_workflow_types(base_url: str, report: SeedReport) -> None:
    for spec in WORKFLOW_TYPES:
        callback = receiver_url(base_url, spec["name"]) if spec["webhook"] else ""
        with transaction.atomic():
            workflow_type, created = WorkflowType.objects.get_or_create(
                name=spec["name"],
                defaults={
                    "display_name": spec["display_name"],
                    "supported_versions": spec["supported_versions"],
                    "callback_url": callback,
                },
            )
            if created:
                report.add("workflow types")
                record(
                    stream="config:workflows.workflowtype",
                    actor=SEED_ACTOR,
                    action="config.created",
                    after={
                        "id": workflow_type.pk,
                        "name": workflow_type.name,
                        "supported_versions": workflow_type.supported_versions,
                        "callback_url": workflow_type.callback_url,
                    },
                )
            elif (
                callback
                and "/demo/webhooks/" in workflow_type.callback_url
                and workflow_type.callback_url != callback
            ):
                # The demo receiver moved (another host or port); an admin's own endpoint
                # is left alone.
                before = {"id": workflow_type.pk, "callback_url": workflow_type.callback_url}
                workflow_type.callback_url = callback
                workflow_type.save(update_fields=["callback_url"])
                record(
                    stream="config:workflows.workflowtype",
                    actor=SEED_ACTOR,
                    action="config.changed",
                    before=before,
                    after={"id": workflow_type.pk, "callback_url": callback},
                )


def _ensure_sources(report: SeedReport) -> None:
    for name, type_names, is_test in SOURCES:
        with transaction.atomic():
            source, created = ApiSource.objects.get_or_create(
                name=name, defaults={"is_test": is_test}
            )
            if not created:
                continue
            source.workflow_types.set(WorkflowType.objects.filter(name__in=type_names))
            report.add("API sources")
            # Sources get no key here: `create_api_key --source NAME` issues one when an
            # engine connects (the simulator issues its own), so the seed prints no secret.
            record(
                stream="config:workflows.apisource",
                actor=SEED_ACTOR,
                action="config.created",
                after={
                    "id": source.pk,
                    "name": name,
                    "workflow_types": sorted(type_names),
                    "is_test": is_test,
                },
            )


def _ensure_onboarding_rule(report: SeedReport) -> None:
    with transaction.atomic():
        if RoutingRule.objects.filter(name=ONBOARDING_RULE["name"]).exists():
            return
        queue = Queue.objects.get(name=ONBOARDING_RULE["queue"])
        rule = RoutingRule.objects.create(
            position=ONBOARDING_RULE["position"],
            name=ONBOARDING_RULE["name"],
            tenant=ONBOARDING_RULE["tenant"],
            queue=queue,
        )
        report.add("routing rules")
        record(
            stream="config:routing.routingrule",
            actor=SEED_ACTOR,
            action="config.created",
            after={"id": rule.pk, "name": rule.name, "queue": queue.name},
        )


def _ensure_users(report: SeedReport) -> None:
    queues = list(Queue.objects.all())
    for spec in USERS:
        with transaction.atomic():
            if User.objects.filter(username=spec.username).exists():
                continue  # an admin may have changed this user since; leave it alone
            user = User.objects.create_user(
                username=spec.username,
                password=DEMO_PASSWORD,
                first_name=spec.first_name,
                last_name=spec.last_name,
                email=f"{spec.username}@desk.example",
                is_staff=spec.superuser,
                is_superuser=spec.superuser,
            )
            user.groups.add(Group.objects.get(name=spec.role))
            profile, _ = WorkerProfile.objects.update_or_create(
                user=user,
                defaults={"clearance": spec.clearance, "amount_limit": spec.amount_limit},
            )
            for code, proficiency in spec.skills:
                WorkerSkill.objects.get_or_create(
                    profile=profile,
                    skill=Skill.objects.get(code=code),
                    defaults={"proficiency": proficiency},
                )
            granted: dict[str, list[str]] = {}
            for queue in queues:
                perms = spec.queues.get(queue.name) or spec.queues.get(EVERY_QUEUE) or ()
                for perm in perms:
                    assign_perm(f"routing.{perm}", user, queue)
                if perms:
                    granted[queue.name] = list(perms)
            report.add("users")
            record(
                stream="config:auth.user",
                actor=SEED_ACTOR,
                action="config.created",
                after={
                    "id": user.pk,
                    "username": user.username,
                    "role": spec.role,
                    "clearance": spec.clearance,
                    "queues": granted,
                    "superuser": spec.superuser,
                    "skills": [f"{code}={level}" for code, level in spec.skills],
                },
            )


def _seed_case(
    demo_case: DemoCase, users: dict[str, User], sources: dict[str, ApiSource], now: datetime
) -> bool:
    """File one case and walk it to its planned state. Returns True if it was filed now.

    A case filed by an earlier run is left alone once anything happened to it after filing
    (a run interrupted right after filing carries on from there)."""
    workflow_type = demo_case.scenario.workflow_type
    source = sources[SOURCE_OF_TYPE[workflow_type]]
    filed_at = now - timedelta(minutes=demo_case.age_minutes)
    packet = demo_packet(demo_case, filed_at)
    # Looked up by key first: the packet's timestamps move with the clock, so filing it
    # again would be a dedupe conflict rather than a repeat.
    case = Case.objects.filter(dedupe_key=dedupe_key_for(packet)).first()
    created = case is None
    if case is None:
        with _clock(filed_at):
            case, _ = file_case(source=source, packet=packet)
    elif AuditEvent.objects.filter(stream=case.pk).count() > 1:
        return False
    _walk(case, demo_case.plan, users, source, now)
    return created


def _walk(case: Case, plan: Plan, users: dict[str, User], source: ApiSource, now: datetime) -> None:
    """Take a freshly filed case to its planned state through the lifecycle services."""
    if plan.state in {"open", "quarantined"} and not plan.reconcile:
        return
    latest = now - timedelta(minutes=1)

    def at(minutes_after_filing: float) -> datetime:
        # Steps happen after filing but never in the future.
        return min(case.created_at + timedelta(minutes=minutes_after_filing), latest)

    if plan.state == "closed":
        with _clock(at(max(5, (now - case.created_at).total_seconds() / 120))):
            cancel_case(source=source, case_id=case.pk, reason=plan.reason)
        return
    actor = users[plan.actor]
    if plan.reconcile:
        with _clock(at(20)):
            reconcile_side_effect(
                case_id=case.pk,
                actor=actor,
                expected_version=case.version,
                state="confirmed_applied",
                provider_record=plan.reconcile,
            )
        return
    if plan.state == "claimed":
        # A live lease: claimed now, so it lasts LEASE_SECONDS into the demo.
        case = claim_case(case_id=case.pk, actor=actor)
        if plan.draft:
            save_draft(
                case_id=case.pk,
                actor=actor,
                resolution="select_po",
                fields={"po_number": "po_a"},
                note="First PO has the matching delivery address; checking with the buyer.",
            )
        return
    # The next step comes well inside the lease, however short LEASE_SECONDS is set.
    step = min(6.0, settings.EXCEPTION_DESK["LEASE_SECONDS"] / 120)
    with _clock(at(10)):
        case = claim_case(case_id=case.pk, actor=actor)
    if plan.state == "waiting":
        with _clock(at(10 + step)):
            request_information(
                case_id=case.pk,
                actor=actor,
                expected_version=case.version,
                lease_token=case.lease_token,
                question=plan.question,
                asked_of=plan.asked_of,
            )
        return
    decided_at = at(10 + step)
    with _clock(decided_at):
        decide_case(
            case_id=case.pk,
            actor=actor,
            expected_version=case.version,
            lease_token=case.lease_token,
            resolution=plan.resolution,
            fields=plan.fields,
            note=plan.note,
            resolution_id=f"demo-{case.pk}",
            evidence_digest=case.evidence_digest,
        )
    event = OutboxEvent.objects.get(case=case, type="case.decided")
    if plan.state == "resolved":
        with _clock(at(11 + step)):
            if case.workflow_type.callback_url:
                _record_attempt(event.pk, 204, "", 85)  # the relay's successful delivery
            else:
                ack_event(source=source, event_id=event.pk)  # the engine read the feed
    elif plan.state == "failed":
        _fail_delivery(event, decided_at, latest)


def _fail_delivery(event: OutboxEvent, decided_at: datetime, latest: datetime) -> None:
    """Every attempt of the retry schedule fails: the case lands in the recovery queue."""
    base = settings.EXCEPTION_DESK["DELIVERY_BASE_DELAY_SECONDS"]
    attempt_at = decided_at
    for attempt in range(settings.EXCEPTION_DESK["DELIVERY_MAX_ATTEMPTS"]):
        if attempt % 2:
            status, error = None, "ConnectError: [Errno 111] Connection refused"
        else:
            status, error = 503, "HTTP 503: upstream connect error"
        with _clock(min(attempt_at, latest)):
            outcome = _record_attempt(event.pk, status, error, 40 if status else 3)
        if outcome != "retry":
            break
        attempt_at += timedelta(seconds=base * 2**attempt)


# --- summaries for the command ----------------------------------------------------------------


def state_counts() -> dict[str, int]:
    counts = {state.value: 0 for state in State}
    for state in Case.objects.values_list("state", flat=True):
        counts[state] += 1
    return counts


def recovery_count() -> int:
    return Case.objects.filter(
        state=State.RESOLUTION_PENDING, delivery_status=DeliveryStatus.FAILED
    ).count()


def pending_feed_count() -> int:
    return OutboxEvent.objects.filter(
        status=OutboxStatus.PENDING, case__workflow_type__callback_url=""
    ).count()
