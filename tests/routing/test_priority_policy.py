"""Priority v2: named components, a score, a band and a one-line explanation; a deadline
someone can hold us to always outranks money; an active override sets the band."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.routing.policy import (
    DEADLINE_POINTS,
    PRIORITY_POLICY_VERSION,
    PriorityOverride,
    compute_severity,
    prioritize,
)

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


def priority(**overrides):
    facts = {
        "severity": "medium",
        "amount": None,
        "currency": "",
        "due": NOW + timedelta(days=3),
        "created_at": NOW,
        "now": NOW,
    }
    return prioritize(**{**facts, **overrides})


def test_components_score_band_and_explanation_are_returned_together():
    result = priority(
        amount="12400.00",
        currency="EUR",
        due=NOW + timedelta(minutes=40),
        customer_tier="strategic",
        blocking=3,
        created_at=NOW - timedelta(hours=9),
    )

    assert result.components == {
        "severity": 25,
        "due": 30,
        "deadline": 0,
        "amount": 10,
        "customer": 15,
        "blocking": 15,
        "age": 2,
    }
    assert result.score == 97 and result.band == "P1"
    assert result.policy_version == PRIORITY_POLICY_VERSION
    assert result.explanation == (
        "P1: medium severity, due in 40 min, amount 12,400.00 EUR, strategic customer, "
        "blocks 3 tasks, waiting 9 h"
    )


@pytest.mark.parametrize(
    ("facts", "band"),
    [
        ({"severity": "low"}, "P4"),  # 10
        ({"severity": "medium", "due": NOW + timedelta(hours=20)}, "P3"),  # 25 + 10
        ({"severity": "high", "due": NOW + timedelta(hours=3)}, "P2"),  # 45 + 20
        ({"severity": "high", "due": NOW - timedelta(minutes=5)}, "P1"),  # 45 + 40
    ],
)
def test_bands_follow_the_score(facts, band):
    assert priority(**facts).band == band


def test_the_explanation_says_how_late_an_overdue_case_is():
    result = priority(due=NOW - timedelta(hours=3), amount="12400.00", currency="EUR")
    assert result.explanation == (
        "P2: medium severity, overdue by 3 h, amount 12,400.00 EUR"  # 25 + 40 + 10 = 75
    )


@pytest.mark.parametrize("deadline", ["contractual", "regulatory", "safety"])
def test_a_deadline_outranks_any_amount_even_through_severity(deadline):
    # The richest case money can make: the amount raises severity (from the lowest class
    # default) and earns the full amount component.
    huge = "900000000.00"
    rich_severity = compute_severity(class_default="low", attributes={"amount": huge})
    rich = priority(severity=rich_severity.level, amount=huge, currency="EUR")
    plain_severity = compute_severity(
        class_default="low", attributes={"amount": "10.00", "deadline_kind": deadline}
    )
    bound = priority(
        severity=plain_severity.level, amount="10.00", currency="EUR", deadline_kind=deadline
    )

    assert bound.score > rich.score
    assert bound.band <= rich.band  # "P1" < "P2": at least as urgent
    assert f"{deadline} deadline" in bound.explanation
    assert bound.components["deadline"] == DEADLINE_POINTS[deadline]


def test_an_unknown_deadline_kind_adds_nothing():
    assert priority(deadline_kind="internal_target").components["deadline"] == 0


def test_age_alone_lifts_a_case_over_time():
    far_future = NOW + timedelta(days=30)
    young = priority(severity="low", due=far_future)
    old = priority(severity="low", due=far_future, created_at=NOW - timedelta(days=5))

    assert young.components["age"] == 0 and young.band == "P4"
    assert old.components["age"] == 30 and old.band == "P3"
    assert old.explanation == "P3: low severity, due in 30 d, waiting 5 d"


def test_an_active_override_sets_the_band_and_keeps_the_computed_score():
    override = PriorityOverride(
        band="P1", by="sam", reason="customer on the phone", expires_at=NOW + timedelta(hours=1)
    )
    computed = priority(severity="low")

    result = priority(severity="low", override=override)

    assert result.band == "P1" and result.computed_band == "P4"
    assert result.score == computed.score and result.components == computed.components
    assert result.explanation.startswith("P1 (override by sam: customer on the phone)")
    assert result.explanation.endswith("computed P4: low severity, due in 3 d")


def test_an_expired_override_or_one_without_expiry_is_not_honoured():
    expired = PriorityOverride(band="P1", by="sam", reason="x", expires_at=NOW)
    endless = PriorityOverride(band="P1", by="sam", reason="x", expires_at=None)

    assert priority(severity="low", override=expired).band == "P4"
    assert priority(severity="low", override=endless).band == "P4"
