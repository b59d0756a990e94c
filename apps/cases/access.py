"""Fetch and authorize in one call. Guardian is consulted only here and in selectors.

Business scope is the queue: `view_queue` to see a case (else 404, its existence is not
revealed), `work_queue` to claim or decide (else 403), `supervise_queue` to retry
deliveries and steer. Roles are Django groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact, In
from django.utils.translation import gettext as _
from guardian.shortcuts import get_objects_for_user, get_users_with_perms

from apps.routing.eligibility import (
    Reason,
    Requirements,
    WorkerFacts,
    is_eligible,
    rank_of,
    skills_from_list,
)
from apps.routing.models import (
    CLASSIFICATION_RANK,
    Classification,
    Queue,
    WorkerProfile,
    WorkerSkill,
)

from .errors import CaseError
from .models import Case, Decision, EvidenceItem

WORKER_GROUPS = {"worker", "supervisor"}


def visible_queues(user: Any, perm: str = "routing.view_queue") -> QuerySet[Queue]:
    if not user.is_authenticated:
        return Queue.objects.none()
    return get_objects_for_user(user, perm, klass=Queue, accept_global_perms=False)


def can_view(user: Any, queue: Queue) -> bool:
    return bool(user.is_authenticated and user.has_perm("routing.view_queue", queue))


def can_work(user: Any, queue: Queue) -> bool:
    if not user.is_authenticated or not user.has_perm("routing.work_queue", queue):
        return False
    return user.is_superuser or user.groups.filter(name__in=WORKER_GROUPS).exists()


def can_supervise(user: Any, queue: Queue) -> bool:
    return bool(user.is_authenticated and user.has_perm("routing.supervise_queue", queue))


def in_group(user: Any, group: str) -> bool:
    return bool(user.is_superuser or user.groups.filter(name=group).exists())


def clearance_of(user: Any) -> str:
    profile = WorkerProfile.objects.filter(user=user).only("clearance").first()
    return profile.clearance if profile else Classification.INTERNAL


def may_see(clearance: str, classification: str) -> bool:
    return CLASSIFICATION_RANK.get(classification, 99) <= CLASSIFICATION_RANK.get(clearance, -1)


def access_case(user: Any, case_id: str, *, for_update: bool = False) -> Case:
    """The case if the user may see it; CaseError not_found otherwise (no existence leak)."""
    cases = Case.objects.select_related("queue", "exception_class", "workflow_type", "assignee")
    if for_update:
        cases = cases.select_for_update(of=("self",))
    case = cases.filter(pk=case_id).first()
    if case is None or not can_view(user, case.queue):
        raise CaseError("not_found", _("No such case."))
    return case


def require_work(user: Any, case: Case) -> None:
    if not can_work(user, case.queue):
        raise CaseError("forbidden", _("You may see this case but not work on it."))


def require_supervise(user: Any, case: Case) -> None:
    if not can_supervise(user, case.queue):
        raise CaseError("forbidden", _("Only a supervisor of this queue may do this."))


def require_eligible(user: Any, case: Case) -> None:
    """Hard constraints, checked on the server at claim and again at decision: the queue
    permission, then every requirement of the case (skills, certifications, authority,
    language, jurisdiction, data clearance, segregation of duties, on shift). CaseError
    forbidden names every unmet constraint."""
    require_work(user, case)
    eligible, reasons = eligibility(user, case)
    if not eligible:
        raise CaseError("forbidden", " ".join(reason.for_you for reason in reasons))


# --- eligibility: the facts of a worker and the requirements of a case ---------------------


def worker_facts(
    user: Any, *, profile: WorkerProfile | None = None, skills: dict[str, int] | None = None
) -> WorkerFacts:
    """The worker's profile as plain data for `is_eligible`. No profile: the defaults (internal
    clearance, no skills, on shift), the same as a profile nobody has edited yet. Callers
    that read many workers pass the profile and skills they already loaded."""
    if profile is None:
        profile = WorkerProfile.objects.filter(user=user).first()
    if profile is None:
        return WorkerFacts(username=user.get_username())
    if skills is None:
        skills = dict(
            WorkerSkill.objects.filter(profile=profile).values_list("skill__code", "proficiency")
        )
    return WorkerFacts(
        username=user.get_username(),
        skills=skills,
        certifications=frozenset(profile.certifications or ()),
        amount_limit=profile.amount_limit,
        languages=frozenset(profile.languages or ()),
        jurisdictions=frozenset(profile.jurisdictions or ()),
        clearance=profile.clearance,
        on_shift=profile.on_shift,
    )


def case_requirements(case: Case, *, classifications: Iterable[str] | None = None) -> Requirements:
    """What the case requires of whoever takes it. `classifications` (of its evidence) may be
    passed when the caller read them for many cases at once.

    Correcting a decision: there is no correction flow yet. Until there is, a case whose
    `attributes.corrects_case` names an earlier case may not be decided by whoever decided
    that one (segregation of duties)."""
    if classifications is None:
        classifications = case.evidence.values_list("classification", flat=True).distinct()
    decided_by: frozenset[str] = frozenset()
    corrects = case.attributes.get("corrects_case")
    if corrects:
        decided_by = frozenset(
            Decision.objects.filter(case_id=str(corrects)).values_list("actor__username", flat=True)
        )
    return Requirements(
        skills=skills_from_list(case.required_skills or ()),
        certifications=frozenset(case.required_certifications or ()),
        authority_amount=case.authority_amount,
        language=case.required_language,
        jurisdiction=case.required_jurisdiction,
        classifications=frozenset({case.data_classification, *classifications}),
        initiated_by=str(case.attributes.get("initiated_by") or ""),
        decided_by=decided_by,
    )


def eligibility(
    user: Any, case: Case, *, facts: WorkerFacts | None = None
) -> tuple[bool, list[Reason]]:
    return is_eligible(facts or worker_facts(user), case_requirements(case))


def evidence_classifications(case_ids: Iterable[str]) -> dict[str, set[str]]:
    """The evidence classifications of many cases in one query."""
    found: dict[str, set[str]] = {}
    rows = (
        EvidenceItem.objects.filter(case_id__in=list(case_ids))
        .values_list("case_id", "classification")
        .distinct()
    )
    for case_id, classification in rows:
        found.setdefault(case_id, set()).add(classification)
    return found


def eligibility_for(
    user: Any, cases: Iterable[Case], *, facts: WorkerFacts | None = None
) -> dict[str, list[Reason]]:
    """Why the user may not take each of these cases ({} entry: eligible), in two queries
    for the whole page: for the queue list to mark or hide rows."""
    cases = list(cases)
    facts = facts or worker_facts(user)
    classifications = evidence_classifications(case.pk for case in cases)
    return {
        case.pk: is_eligible(
            facts, case_requirements(case, classifications=classifications.get(case.pk, ()))
        )[1]
        for case in cases
    }


def eligible_filter_for(user: Any, *, facts: WorkerFacts | None = None) -> Q:
    """A filter on Case for the cases the user is eligible for, so lists and "Next case" read
    only those: `Case.objects.filter(eligible_filter_for(user))`. It mirrors `is_eligible`
    constraint by constraint (a test compares the two on every constraint).

    Skills and certifications are JSON lists: on PostgreSQL they are tested with JSON
    containment (every required {"code", "min_proficiency"} must be one the worker could
    satisfy); on other databases (the embedded SQLite default) that part is left to the
    Python check, which claim and decision always run anyway."""
    facts = facts or worker_facts(user)
    if not facts.on_shift:
        return Q(pk__in=[])
    allowed = [str(c) for c in CLASSIFICATION_RANK if rank_of(c) <= rank_of(facts.clearance)]
    # Text of a JSON attribute, "" when missing, so a missing key never makes a negated
    # comparison NULL (which would hide the row).
    initiated_by = Coalesce(KT("attributes__initiated_by"), Value(""), output_field=TextField())
    corrects_case = Coalesce(KT("attributes__corrects_case"), Value(""), output_field=TextField())
    condition = (
        Q(data_classification__in=allowed)
        & ~Exists(
            EvidenceItem.objects.filter(case=OuterRef("pk")).exclude(classification__in=allowed)
        )
        & (Q(authority_amount__isnull=True) | Q(authority_amount__lte=facts.amount_limit))
        & (Q(required_language="") | Q(required_language__in=sorted(facts.languages)))
        & (Q(required_jurisdiction="") | Q(required_jurisdiction__in=sorted(facts.jurisdictions)))
        & ~Q(Exact(initiated_by, facts.username))
        & ~Q(
            In(
                corrects_case,
                Decision.objects.filter(actor__username=facts.username).values("case_id"),
            )
        )
    )
    if connection.vendor == "postgresql":
        acceptable = [
            {"code": code, "min_proficiency": level}
            for code, proficiency in sorted(facts.skills.items())
            for level in range(0, proficiency + 1)
        ]
        condition &= Q(required_skills__contained_by=acceptable)
        condition &= Q(required_certifications__contained_by=sorted(facts.certifications))
    return condition


def eligible_cases(
    user: Any, cases: QuerySet[Case], *, facts: WorkerFacts | None = None
) -> QuerySet[Case]:
    """`cases` narrowed to those the user is eligible for (for the queue list's "offer only
    what I may take" and for "Next case")."""
    return cases.filter(eligible_filter_for(user, facts=facts))


# --- who works and supervises a queue ------------------------------------------------------


def workers_of(queue: Queue) -> list[Any]:
    """Active users who may work the queue (`can_work`: work_queue, directly or through a
    group, and a worker or supervisor role), by username, in one query."""
    users = get_users_with_perms(
        queue, only_with_perms_in=["work_queue"], with_superusers=False, with_group_users=True
    )
    return list(
        users.filter(Q(groups__name__in=WORKER_GROUPS) | Q(is_superuser=True), is_active=True)
        .distinct()
        .order_by("username")
    )


def supervisors_of(queue: Queue) -> list[Any]:
    users = get_users_with_perms(
        queue, only_with_perms_in=["supervise_queue"], with_superusers=False, with_group_users=True
    )
    return list(users.filter(is_active=True).order_by("username"))


def supervises_worker(actor: Any, worker: Any) -> bool:
    """The actor supervises at least one queue the worker may work."""
    if not actor.is_authenticated:
        return False
    supervised = set(visible_queues(actor, "routing.supervise_queue").values_list("pk", flat=True))
    if not supervised:
        return False
    worked = visible_queues(worker, "routing.work_queue").values_list("pk", flat=True)
    return bool(supervised.intersection(worked))
