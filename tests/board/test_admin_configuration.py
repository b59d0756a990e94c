"""Issue 3's configuration lives in the Django admin, and every change there is audited:
the object itself, its inline rows, its many-to-many choices and bulk deletions. Capacity
adjustments are read-only there (the board makes them); the signing secret is shown, not
edited; a changed routing rule is a new version."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.routing.models import (
    BusinessCalendar,
    CapacityAdjustment,
    ExceptionClass,
    Queue,
    RoutingRule,
    Skill,
    TaskType,
    TaskTypeSkill,
    WorkerProfile,
    WorkerSkill,
)
from apps.workflows.models import WorkflowType


@pytest.fixture
def admin_client(client, reference_data: None):
    admin = User.objects.create_superuser("ada", "ada@example.com", "pw-ada-admin")
    client.force_login(admin)
    return client


def events(stream: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(stream=stream).order_by("sequence"))


def inline_management(prefix: str, *, total: int, initial: int = 0) -> dict[str, str]:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.parametrize(
    "model",
    [
        "businesscalendar",
        "skill",
        "tasktype",
        "queue",
        "exceptionclass",
        "routingrule",
        "workerprofile",
        "capacityadjustment",
    ],
)
def test_every_new_configuration_page_opens_for_an_admin(admin_client, model):
    response = admin_client.get(reverse(f"admin:routing_{model}_changelist"))

    assert response.status_code == 200


def test_a_task_type_with_a_required_skill_is_audited_row_by_row(admin_client):
    skill = Skill.objects.get(code="refunds")
    workflow_type = WorkflowType.objects.get(name="refund_approval")
    exception_class = ExceptionClass.objects.get(code="policy_denied")
    TaskType.objects.filter(workflow_type=workflow_type, exception_class=exception_class).delete()
    prefix = "tasktypeskill_set"

    response = admin_client.post(
        reverse("admin:routing_tasktype_add"),
        {
            "workflow_type": workflow_type.pk,
            "exception_class": exception_class.pk,
            "certifications": '["refund-handling"]',
            "language": "de",
            "jurisdiction": "@region",
            "workload_weight": "3",
            "data_classification": "confidential",
            **inline_management(prefix, total=1),
            f"{prefix}-0-skill": skill.pk,
            f"{prefix}-0-min_proficiency": "4",
        },
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    task_type = TaskType.objects.get(workflow_type=workflow_type, exception_class=exception_class)
    requirement = TaskTypeSkill.objects.get(task_type=task_type)
    assert (requirement.skill, requirement.min_proficiency) == (skill, 4)
    created = events("config:routing.tasktype")[-1]
    assert (created.action, created.after["id"], created.after["workload_weight"]) == (
        "config.created",
        task_type.pk,
        3,
    )
    skill_event = events("config:routing.tasktypeskill")[-1]
    assert skill_event.action == "config.created"
    assert skill_event.after["min_proficiency"] == 4
    assert (skill_event.actor_kind, skill_event.actor_label) == ("user", "ada")
    assert list(verify(["config:routing.tasktype", "config:routing.tasktypeskill"])) == []


def test_changing_and_deleting_inline_rows_is_audited_with_what_they_were(admin_client):
    workflow_type = WorkflowType.objects.get(name="support_account_change")
    exception_class = ExceptionClass.objects.get(code="output_rejected")
    task_type = TaskType.objects.create(
        workflow_type=workflow_type, exception_class=exception_class
    )
    kept = TaskTypeSkill.objects.create(
        task_type=task_type, skill=Skill.objects.get(code="account_security"), min_proficiency=2
    )
    dropped = TaskTypeSkill.objects.create(
        task_type=task_type, skill=Skill.objects.get(code="refunds"), min_proficiency=1
    )
    prefix = "tasktypeskill_set"

    response = admin_client.post(
        reverse("admin:routing_tasktype_change", args=[task_type.pk]),
        {
            "workflow_type": workflow_type.pk,
            "exception_class": exception_class.pk,
            "certifications": "[]",
            "workload_weight": "1",
            "data_classification": "internal",
            **inline_management(prefix, total=2, initial=2),
            f"{prefix}-0-id": kept.pk,
            f"{prefix}-0-task_type": task_type.pk,
            f"{prefix}-0-skill": kept.skill_id,
            f"{prefix}-0-min_proficiency": "5",
            f"{prefix}-1-id": dropped.pk,
            f"{prefix}-1-task_type": task_type.pk,
            f"{prefix}-1-skill": dropped.skill_id,
            f"{prefix}-1-min_proficiency": "1",
            f"{prefix}-1-DELETE": "on",
        },
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    kept.refresh_from_db()
    assert kept.min_proficiency == 5
    assert not TaskTypeSkill.objects.filter(pk=dropped.pk).exists()
    stream = events("config:routing.tasktypeskill")
    changed, deleted = stream[-2], stream[-1]
    assert changed.action == "config.changed"
    assert (changed.before["min_proficiency"], changed.after["min_proficiency"]) == (2, 5)
    assert deleted.action == "config.deleted"
    assert (deleted.before["id"], deleted.before["skill"]) == (dropped.pk, dropped.skill_id)


def test_the_exception_class_page_edits_its_escalation_ladder_inline(admin_client):
    exception_class = ExceptionClass.objects.get(code="evidence_conflict")

    page = admin_client.get(
        reverse("admin:routing_exceptionclass_change", args=[exception_class.pk])
    ).content.decode()

    assert 'name="escalation_steps-TOTAL_FORMS"' in page
    assert 'name="resolutions-TOTAL_FORMS"' in page
    assert 'name="control_owner"' in page


def test_a_queue_s_accepted_task_types_are_audited_when_they_change(admin_client):
    queue = Queue.objects.get(name="triage")
    task_type = TaskType.objects.create(
        workflow_type=WorkflowType.objects.get(name="invoice_match"),
        exception_class=ExceptionClass.objects.get(code="evidence_conflict"),
    )

    response = admin_client.post(
        reverse("admin:routing_queue_change", args=[queue.pk]),
        {
            "name": "triage",
            "display_name": queue.display_name,
            "owning_team": queue.owning_team,
            "description": queue.description,
            "service_target_minutes": "60",
            "assignment_model": "priority_push",
            "push_concurrency_cap": "2",
            "focus_period_minutes": "10",
            "continuity_release_minutes": "60",
            "push_bands": '["P1"]',
            "accepted_task_types": [task_type.pk],
            "continuity_note": "Page the operations lead.",
        },
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    queue.refresh_from_db()
    assert queue.assignment_model == "priority_push"
    assert list(queue.accepted_task_types.all()) == [task_type]
    relation = events("config:routing.queue")[-1]
    assert relation.action == "config.relations_changed"
    assert relation.before["accepted_task_types"] == []
    assert relation.after["accepted_task_types"] == [task_type.pk]


def test_a_changed_routing_rule_is_a_new_version_and_an_unchanged_save_is_not(admin_client):
    rule = RoutingRule.objects.order_by("position").first()
    assert rule is not None
    url = reverse("admin:routing_routingrule_change", args=[rule.pk])
    data = {
        "position": rule.position,
        "name": rule.name,
        "active": "on" if rule.active else "",
        "workflow_type": rule.workflow_type,
        "exception_class": rule.exception_class,
        "tenant": rule.tenant,
        "region": rule.region,
        "severity": rule.severity,
        "min_amount": rule.min_amount or "",
        "max_amount": rule.max_amount or "",
        "queue": rule.queue_id,
    }
    version = rule.version

    assert admin_client.post(url, data).status_code == 302
    rule.refresh_from_db()
    assert rule.version == version

    assert admin_client.post(url, {**data, "tenant": "acme-eu"}).status_code == 302
    rule.refresh_from_db()
    assert (rule.tenant, rule.version) == ("acme-eu", version + 1)
    change = events("config:routing.routingrule")[-1]
    assert (change.before["version"], change.after["version"]) == (version, version + 1)


def test_the_signing_secret_is_shown_but_never_changed_through_the_admin(admin_client):
    workflow_type = WorkflowType.objects.get(name="invoice_match")
    secret = workflow_type.signing_secret
    url = reverse("admin:workflows_workflowtype_change", args=[workflow_type.pk])

    page = admin_client.get(url).content.decode()
    response = admin_client.post(
        url,
        {
            "name": "invoice_match",
            "display_name": workflow_type.display_name,
            "supported_versions": '["16", "17"]',
            "callback_url": "",
            "signing_secret": "whsec_chosen-by-hand",
        },
    )

    assert secret in page
    assert 'name="signing_secret"' not in page
    assert response.status_code == 302
    workflow_type.refresh_from_db()
    assert workflow_type.signing_secret == secret


def test_capacity_adjustments_are_listed_but_never_added_changed_or_deleted_in_the_admin(
    admin_client, worker, supervisor
):
    now = timezone.now()
    adjustment = CapacityAdjustment.objects.create(
        profile=WorkerProfile.objects.get(user=worker),
        capacity=2,
        reason="training afternoon",
        actor=supervisor,
        created_at=now,
        expires_at=now + timezone.timedelta(hours=4),
    )

    listing = admin_client.get(reverse("admin:routing_capacityadjustment_changelist"))
    add = admin_client.get(reverse("admin:routing_capacityadjustment_add"))
    delete = admin_client.post(
        reverse("admin:routing_capacityadjustment_delete", args=[adjustment.pk]), {"post": "yes"}
    )

    assert listing.status_code == 200 and "training afternoon" in listing.content.decode()
    assert add.status_code == 403
    assert delete.status_code == 403
    assert CapacityAdjustment.objects.filter(pk=adjustment.pk).exists()


def test_a_profile_s_skills_and_capacity_are_audited_and_its_shift_is_not_editable_here(
    admin_client, worker
):
    profile = WorkerProfile.objects.get(user=worker)
    skill = Skill.objects.get(code="invoice_matching")
    url = reverse("admin:routing_workerprofile_change", args=[profile.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    data = {
        name: value
        for name, value in page.context["adminform"].form.initial.items()
        if value is not None and not isinstance(value, list | dict)
    }
    data.update(
        {
            "user": worker.pk,
            "clearance": "confidential",
            "amount_limit": "5000",
            "capacity": "6",
            "certifications": "[]",
            "languages": '["de", "en"]',
            "jurisdictions": "[]",
            # Not a field of the form: going off shift hands cases off, on the queue page.
            "on_shift": "",
        }
    )
    data.update(inline_management("workerskill_set", total=1))
    data.update({"workerskill_set-0-skill": skill.pk, "workerskill_set-0-proficiency": "4"})
    data.update(inline_management("capacity_adjustments", total=0))

    response = admin_client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:3000]
    assert WorkerSkill.objects.get(profile=profile).proficiency == 4
    profile.refresh_from_db()
    assert (profile.clearance, profile.capacity, profile.languages) == (
        "confidential",
        6,
        ["de", "en"],
    )
    assert profile.on_shift is True
    assert events("config:routing.workerskill")[-1].after["proficiency"] == 4
    change = events("config:routing.workerprofile")[-1]
    assert (change.before["capacity"], change.after["capacity"]) == (10, 6)


def test_bulk_deleting_calendars_from_the_list_audits_each_one(admin_client):
    first = BusinessCalendar.objects.create(name="cal-one", time_zone="Europe/Berlin")
    second = BusinessCalendar.objects.create(name="cal-two", time_zone="UTC")

    response = admin_client.post(
        reverse("admin:routing_businesscalendar_changelist"),
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )

    assert response.status_code == 302
    assert not BusinessCalendar.objects.filter(pk__in=[first.pk, second.pk]).exists()
    deleted = [
        e.before["name"]
        for e in events("config:routing.businesscalendar")
        if e.action == "config.deleted"
    ]
    assert {"cal-one", "cal-two"} <= set(deleted)
