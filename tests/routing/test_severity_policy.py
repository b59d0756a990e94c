"""Severity comes from customer impact, money, compliance risk and time sensitivity, is
explained and versioned, and never from what the model thought of its own answer."""

from __future__ import annotations

import pytest

from apps.routing.policy import SEVERITY_POLICY_VERSION, compute_severity


def test_without_other_facts_the_class_default_applies_and_says_so():
    result = compute_severity(class_default="medium", attributes={"tenant": "acme-eu"})

    assert result.level == "medium"
    assert result.explanation == "medium: class default (medium)"
    assert result.policy_version == SEVERITY_POLICY_VERSION
    assert result.inputs["class_default"] == "medium"


@pytest.mark.parametrize(
    ("impact", "level", "because"),
    [
        ("low", "low", "customer impact low"),
        ("medium", "medium", "customer impact medium"),
        ("high", "high", "customer impact high"),
        (5, "low", "5 customers affected"),
        (40, "medium", "40 customers affected"),
        (250, "high", "250 customers affected"),
        (5000, "critical", "5000 customers affected"),
    ],
)
def test_customer_impact_raises_severity(impact, level, because):
    result = compute_severity(class_default="low", attributes={"customer_impact": impact})

    assert result.level == level
    assert result.explanation.startswith(f"{level}: {because} ({level})")
    assert result.inputs["customer_impact"] == impact


def test_financial_exposure_raises_severity_but_money_alone_stops_at_high():
    def level(amount: str) -> str:
        return compute_severity(class_default="low", attributes={"amount": amount}).level

    assert level("999.99") == "low"
    assert level("12400.00") == "medium"
    assert level("100000") == "high"
    assert level("250000000") == "high"
    explained = compute_severity(class_default="low", attributes={"amount": "12400.00"})
    assert explained.explanation == "medium: amount 12,400.00 (medium), class default (low)"
    assert explained.inputs["amount"] == "12400.00"


@pytest.mark.parametrize(
    ("risk", "level"), [(True, "high"), ("medium", "medium"), ("critical", "critical")]
)
def test_compliance_risk_raises_severity(risk, level):
    result = compute_severity(class_default="low", attributes={"compliance_risk": risk})

    assert result.level == level
    assert "compliance risk" in result.explanation


def test_time_sensitivity_raises_severity_to_high():
    result = compute_severity(class_default="low", attributes={"time_sensitive": True})

    assert result.level == "high"
    assert result.explanation == "high: time sensitive (high), class default (low)"
    assert result.inputs["time_sensitive"] is True


def test_the_highest_factor_wins_and_the_class_default_is_a_floor():
    mixed = compute_severity(
        class_default="medium",
        attributes={"customer_impact": "low", "amount": "150000", "compliance_risk": False},
    )
    assert mixed.level == "high"
    assert mixed.explanation.startswith("high: amount 150,000.00 (high)")

    quiet = compute_severity(class_default="high", attributes={"customer_impact": "none"})
    assert quiet.level == "high"


def test_model_confidence_is_ignored_and_the_explanation_says_so():
    facts = {"customer_impact": "medium", "amount": "5000"}
    unsure = compute_severity(class_default="low", attributes={**facts, "confidence": 0.02})
    sure = compute_severity(class_default="low", attributes={**facts, "confidence": 0.99})
    unstated = compute_severity(class_default="low", attributes=facts)

    assert unsure.level == sure.level == unstated.level == "medium"
    assert unsure.explanation == sure.explanation
    assert sure.explanation.endswith("; model confidence not used")
    assert sure.inputs["ignored"] == ["confidence"]
    assert "confidence" not in unstated.inputs.get("ignored", [])
