"""The pure eligibility rule: every hard constraint on its own, with the reason a person
reads, and no database."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apps.routing.eligibility import Requirements, WorkerFacts, is_eligible

WENDY = WorkerFacts(
    username="wendy",
    skills={"refunds": 3, "invoices": 5},
    certifications=frozenset({"sox"}),
    amount_limit=Decimal("10000"),
    languages=frozenset({"en", "de"}),
    jurisdictions=frozenset({"eu"}),
    clearance="confidential",
)


def reasons_for(requirements: Requirements, worker: WorkerFacts = WENDY) -> list[str]:
    eligible, reasons = is_eligible(worker, requirements)
    assert eligible is (not reasons)
    return [str(reason) for reason in reasons]


def test_a_case_that_requires_nothing_is_open_to_a_worker_with_an_empty_profile():
    assert is_eligible(WorkerFacts(username="newbie"), Requirements()) == (True, [])


def test_a_worker_who_meets_every_requirement_is_eligible():
    requirements = Requirements(
        skills={"refunds": 3},
        certifications=frozenset({"sox"}),
        authority_amount=Decimal("10000"),
        language="de",
        jurisdiction="eu",
        classifications=frozenset({"internal", "confidential"}),
        initiated_by="ap-bot",
    )
    assert reasons_for(requirements) == []


@pytest.mark.parametrize(
    ("requirements", "reason"),
    [
        (Requirements(skills={"refunds": 4}), "needs skill refunds ≥ 4 (has 3)"),
        (Requirements(skills={"chargebacks": 1}), "needs skill chargebacks ≥ 1"),
        (Requirements(certifications=frozenset({"pci"})), "needs certification pci"),
        (
            Requirements(authority_amount=Decimal("12400")),
            "needs authority for 12,400.00 (limit 10,000.00)",
        ),
        (Requirements(language="fr"), "needs language fr"),
        (Requirements(jurisdiction="us"), "needs jurisdiction us"),
        (
            Requirements(classifications=frozenset({"internal", "restricted"})),
            "clearance confidential does not cover restricted",
        ),
        (
            Requirements(initiated_by="wendy"),
            "initiated this request (segregation of duties)",
        ),
        (
            Requirements(decided_by=frozenset({"wendy"})),
            "made the decision this case corrects (segregation of duties)",
        ),
    ],
    ids=[
        "skill-too-low",
        "skill-missing",
        "certification",
        "authority",
        "language",
        "jurisdiction",
        "clearance",
        "initiated-by",
        "corrects-own-decision",
    ],
)
def test_each_hard_constraint_on_its_own_makes_a_worker_ineligible_and_says_why(
    requirements, reason
):
    assert reasons_for(requirements) == [reason]


def test_an_off_shift_worker_is_not_eligible_even_for_a_case_that_requires_nothing():
    off = WorkerFacts(username="wendy", on_shift=False)
    assert reasons_for(Requirements(), off) == ["is off shift"]


def test_every_unmet_constraint_is_reported_not_only_the_first():
    requirements = Requirements(skills={"refunds": 5}, language="fr", initiated_by="wendy")
    assert reasons_for(requirements) == [
        "needs skill refunds ≥ 5 (has 3)",
        "needs language fr",
        "initiated this request (segregation of duties)",
    ]


def test_the_worker_is_addressed_directly_on_their_own_pages():
    _, reasons = is_eligible(WENDY, Requirements(skills={"refunds": 4}, initiated_by="wendy"))
    assert [reason.for_you for reason in reasons] == [
        "This case needs skill refunds at level 4; yours is 3.",
        "Segregation of duties: you initiated this request, so you may not decide it.",
    ]


def test_an_unknown_classification_is_treated_as_more_sensitive_than_restricted():
    top = WorkerFacts(username="root", clearance="restricted")
    assert reasons_for(Requirements(classifications=frozenset({"secret"})), top) == [
        "clearance restricted does not cover secret"
    ]


def test_a_worker_with_an_amount_limit_equal_to_the_amount_has_the_authority():
    assert reasons_for(Requirements(authority_amount=Decimal("10000.00"))) == []


def test_plain_mappings_are_accepted_with_the_case_field_shapes():
    eligible, reasons = is_eligible(
        {"username": "wendy", "skills": {"refunds": 2}, "clearance": "internal"},
        {
            "skills": [{"code": "refunds", "min_proficiency": 3}],
            "authority_amount": "500.00",
            "classifications": ["internal"],
        },
    )
    assert not eligible
    assert [str(r) for r in reasons] == [
        "needs skill refunds ≥ 3 (has 2)",
        "needs authority for 500.00 (limit 0.00)",
    ]
