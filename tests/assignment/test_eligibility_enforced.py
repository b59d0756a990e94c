"""Eligibility is enforced on the server at claim and again at decision, and the lists and
"Next case" read only eligible cases through a filter that agrees with the pure rule."""

from __future__ import annotations

import itertools

import pytest
from django.contrib.auth.models import User

from apps.cases.access import (
    case_requirements,
    eligibility_for,
    eligible_filter_for,
    worker_facts,
)
from apps.cases.errors import CaseError
from apps.cases.models import Case, Decision, State
from apps.cases.services import claim_case
from apps.routing.eligibility import is_eligible
from apps.routing.models import WorkerProfile, WorkerSkill
from tests.delivery.helpers import decide

from .conftest import make_task_type, make_worker

RESTRICTED_EVIDENCE = [
    {
        "ref": "kyc_1",
        "source": "kyc",
        "source_timestamp": "2026-08-31T14:19:59Z",
        "classification": "restricted",
        "content": {"passport": "X123"},
    }
]


def claim_refused(case: Case, user: User) -> str:
    with pytest.raises(CaseError) as refused:
        claim_case(case_id=case.pk, actor=user)
    assert refused.value.kind == "forbidden"
    assert Case.objects.get(pk=case.pk).state == State.OPEN
    return refused.value.message


@pytest.mark.parametrize(
    ("requirements", "worker_profile", "message"),
    [
        (
            {"required_skills": {"refunds": 3}},
            {"skills": {"refunds": 2}},
            "This case needs skill refunds at level 3; yours is 2.",
        ),
        (
            {"required_certifications": ["sox"]},
            {},
            "This case needs the sox certification.",
        ),
        (
            {"authority_amount": "12400.00"},
            {"amount_limit": "5000"},
            "This case needs authority for 12,400.00; your limit is 5,000.00.",
        ),
        ({"required_language": "de"}, {"languages": ["en"]}, "This case needs language de."),
        (
            {"required_jurisdiction": "us"},
            {"jurisdictions": ["eu"]},
            "This case needs jurisdiction us.",
        ),
        (
            {"data_classification": "confidential"},
            {"clearance": "internal"},
            "Your data clearance does not cover this case's evidence.",
        ),
    ],
    ids=["skill", "certification", "authority", "language", "jurisdiction", "clearance"],
)
def test_a_claim_is_refused_for_each_unmet_requirement_and_allowed_once_it_is_met(
    file_case_with, requirements, worker_profile, message
):
    case = file_case_with(**requirements)
    wendy = make_worker("wendy", **worker_profile)
    ready = make_worker(
        "ready",
        skills={"refunds": 3},
        certifications=["sox"],
        amount_limit="12400",
        languages=["de"],
        jurisdictions=["us"],
        clearance="confidential",
    )

    assert claim_refused(case, wendy) == message
    assert claim_case(case_id=case.pk, actor=ready).assignee == ready


def test_evidence_above_the_workers_clearance_blocks_the_claim(file_case_with):
    case = file_case_with(evidence=RESTRICTED_EVIDENCE)
    wendy = make_worker("wendy", clearance="confidential")

    assert claim_refused(case, wendy) == "Your data clearance does not cover this case's evidence."


def test_an_off_shift_worker_cannot_claim(file_case_with):
    case = file_case_with()
    wendy = make_worker("wendy", on_shift=False)

    assert claim_refused(case, wendy) == "You are off shift: go on shift to take cases."


def test_the_initiator_cannot_claim_their_own_request_even_as_superuser(file_case_with):
    root = User.objects.create_superuser("root", password="pw")
    case = file_case_with(
        attributes={"tenant": "acme-eu", "amount": "10", "currency": "EUR", "initiated_by": "root"}
    )

    message = claim_refused(case, root)
    assert message.startswith("Segregation of duties: you initiated this request")


def test_whoever_decided_a_case_cannot_decide_the_case_that_corrects_it(file_case_with):
    wendy = make_worker("wendy")
    walter = make_worker("walter")
    original = file_case_with()
    claim_case(case_id=original.pk, actor=wendy)
    decide(original, wendy)
    correction = file_case_with(
        attributes={"tenant": "acme-eu", "amount": "10", "corrects_case": original.pk}
    )

    message = claim_refused(correction, wendy)
    assert "this case corrects a decision you made" in message
    assert claim_case(case_id=correction.pk, actor=walter).assignee == walter


def test_eligibility_is_checked_again_at_decision(file_case_with):
    case = file_case_with(required_skills={"refunds": 3})
    wendy = make_worker("wendy", skills={"refunds": 3})
    claim_case(case_id=case.pk, actor=wendy)
    # The supervisor lowers her proficiency while she holds the case.
    WorkerSkill.objects.filter(profile__user=wendy).update(proficiency=1)

    with pytest.raises(CaseError) as refused:
        decide(case, wendy)

    assert refused.value.kind == "forbidden"
    assert "needs skill refunds at level 3" in refused.value.message
    assert not Decision.objects.filter(case=case).exists()
    assert Case.objects.get(pk=case.pk).state == State.CLAIMED


def test_task_type_requirements_copied_at_filing_are_enforced_at_claim(file_case_with):
    make_task_type(skills={"invoices": 2}, language="de", workload_weight=2)
    case = file_case_with()
    assert case.required_skills == [{"code": "invoices", "min_proficiency": 2}]

    novice = make_worker("novice", skills={"invoices": 1}, languages=["de"])
    expert = make_worker("expert", skills={"invoices": 4}, languages=["de"])

    assert "needs skill invoices at level 2" in claim_refused(case, novice)
    assert claim_case(case_id=case.pk, actor=expert).assignee == expert


def test_the_list_filter_offers_exactly_the_cases_the_pure_rule_allows(file_case_with):
    """Every constraint, on cases and workers that differ in one thing at a time: the SQL
    filter used by lists and "Next case" agrees with `is_eligible` case by case."""
    workers = [
        make_worker("plain"),
        make_worker(
            "senior",
            skills={"refunds": 5, "invoices": 2},
            certifications=["sox", "pci"],
            amount_limit="50000",
            languages=["de", "en"],
            jurisdictions=["eu", "us"],
            clearance="restricted",
        ),
        make_worker("junior", skills={"refunds": 2}, languages=["en"], jurisdictions=["eu"]),
        make_worker("away", skills={"refunds": 5}, on_shift=False),
        make_worker("ap-bot", skills={"refunds": 5}, clearance="restricted"),
    ]
    decided = file_case_with()
    claim_case(case_id=decided.pk, actor=workers[0])
    decide(decided, workers[0])
    cases = [
        file_case_with(),
        file_case_with(required_skills={"refunds": 2}),
        file_case_with(required_skills={"refunds": 3}),
        file_case_with(required_skills={"refunds": 1, "invoices": 2}),
        file_case_with(required_certifications=["sox"]),
        file_case_with(required_certifications=["sox", "pci"]),
        file_case_with(authority_amount="12400.00"),
        file_case_with(required_language="de"),
        file_case_with(required_jurisdiction="us"),
        file_case_with(data_classification="confidential"),
        file_case_with(evidence=RESTRICTED_EVIDENCE),
        file_case_with(attributes={"tenant": "t", "initiated_by": "senior"}),
        file_case_with(attributes={"tenant": "t"}),  # no initiated_by at all
        file_case_with(attributes={"tenant": "t", "corrects_case": decided.pk}),
    ]
    ids = [case.pk for case in cases]

    compared = 0
    for worker, case in itertools.product(workers, cases):
        in_filter = Case.objects.filter(eligible_filter_for(worker), pk=case.pk).exists()
        by_rule = is_eligible(worker_facts(worker), case_requirements(case))[0]
        assert in_filter == by_rule, (worker.username, case.pk, case_requirements(case))
        compared += 1
    assert compared == len(workers) * len(cases)
    # And the filter is not trivially empty or full.
    senior_sees = Case.objects.filter(eligible_filter_for(workers[1]), pk__in=ids).count()
    plain_sees = Case.objects.filter(eligible_filter_for(workers[0]), pk__in=ids).count()
    assert senior_sees == len(cases) - 1  # all but the one senior initiated
    assert plain_sees == 3  # no requirements, no initiated_by, corrects someone else's


def test_a_worker_without_a_profile_gets_the_defaults_and_can_work_plain_cases(file_case_with):
    wendy = make_worker("wendy")
    WorkerProfile.objects.filter(user=wendy).delete()
    case = file_case_with()

    assert claim_case(case_id=case.pk, actor=wendy).assignee == wendy
    assert WorkerProfile.objects.get(user=wendy).on_shift is True


def test_a_page_of_rows_gets_its_reasons_in_a_fixed_number_of_queries(
    file_case_with, django_assert_max_num_queries
):
    wendy = make_worker("wendy", skills={"refunds": 2})
    rows = [
        file_case_with(),
        file_case_with(required_skills={"refunds": 3}),
        file_case_with(evidence=RESTRICTED_EVIDENCE),
        *[file_case_with() for _ in range(5)],
    ]

    with django_assert_max_num_queries(3):
        reasons = eligibility_for(wendy, rows)

    assert reasons[rows[0].pk] == []
    assert [str(r) for r in reasons[rows[1].pk]] == ["needs skill refunds ≥ 3 (has 2)"]
    assert [r.code for r in reasons[rows[2].pk]] == ["clearance"]
