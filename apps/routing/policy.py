"""Pure routing policy: data in, decision and explanation out. No database, no cases import."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

PRIORITY_POLICY_VERSION = "priority-2026.1"
ROUTING_POLICY_VERSION = "routing-2026.1"

SEVERITY_POINTS = {"low": 10, "medium": 25, "high": 45, "critical": 70}


@dataclass(frozen=True)
class RoutingDecision:
    queue: str
    rule_id: int | None
    explanation: str
    policy_version: str = ROUTING_POLICY_VERSION


@dataclass(frozen=True)
class Priority:
    band: str
    score: int
    components: dict[str, int] = field(default_factory=dict)
    explanation: str = ""
    policy_version: str = PRIORITY_POLICY_VERSION


def _amount(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def classify(
    facts: Mapping[str, Any], rules: Iterable[Mapping[str, Any]], fallback_queue: str
) -> RoutingDecision:
    """First active rule (in order) whose every non-empty condition matches the facts."""
    amount = _amount(facts.get("amount"))
    for rule in rules:
        conditions = []
        for key in ("workflow_type", "exception_class", "tenant", "region", "severity"):
            if rule.get(key):
                if str(facts.get(key) or "") != rule[key]:
                    break
                conditions.append(f"{key}={rule[key]}")
        else:
            if rule.get("min_amount") is not None:
                if amount is None or amount < rule["min_amount"]:
                    continue
                conditions.append(f"amount>={rule['min_amount']}")
            if rule.get("max_amount") is not None:
                if amount is None or amount > rule["max_amount"]:
                    continue
                conditions.append(f"amount<={rule['max_amount']}")
            why = ", ".join(conditions) or "matches everything"
            return RoutingDecision(
                queue=str(rule["queue"]),
                rule_id=rule.get("id"),
                explanation=f"rule '{rule.get('name', rule.get('id'))}' ({why})",
            )
    return RoutingDecision(
        queue=fallback_queue, rule_id=None, explanation="no routing rule matched: triage"
    )


def due_at(created_at: datetime, service_target_minutes: int) -> datetime:
    """Wall-clock service target. Business calendars arrive with the routing issue."""
    return created_at + timedelta(minutes=service_target_minutes)


def _format_minutes(minutes: int) -> str:
    if minutes < 0:
        return f"overdue by {_format_minutes(-minutes)}"
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // (24 * 60)} d"


def prioritize(
    *,
    severity: str,
    amount: Any,
    currency: str,
    due: datetime,
    created_at: datetime,
    now: datetime,
) -> Priority:
    """Score = severity + due-time proximity + amount + age, mapped to bands P1..P4.

    Due-time proximity outweighs money: the amount component is capped below the points a
    near deadline gives, so a large amount never outranks a case about to breach.
    """
    minutes_left = int((due - now).total_seconds() // 60)
    if minutes_left <= 0:
        proximity = 40
    elif minutes_left <= 60:
        proximity = 30
    elif minutes_left <= 240:
        proximity = 20
    elif minutes_left <= 24 * 60:
        proximity = 10
    else:
        proximity = 0
    value = _amount(amount)
    if value is None:
        money = 0
    elif value >= 100_000:
        money = 15
    elif value >= 10_000:
        money = 10
    elif value >= 1_000:
        money = 5
    else:
        money = 0
    age_hours = max(0, int((now - created_at).total_seconds() // 3600))
    age = min(15, age_hours // 4)
    components = {
        "severity": SEVERITY_POINTS.get(severity, 25),
        "due": proximity,
        "amount": money,
        "age": age,
    }
    score = sum(components.values())
    if score >= 80:
        band = "P1"
    elif score >= 55:
        band = "P2"
    elif score >= 35:
        band = "P3"
    else:
        band = "P4"
    parts = [
        f"{severity} severity",
        f"due {_format_minutes(minutes_left)}"
        if minutes_left >= 0
        else _format_minutes(minutes_left),
    ]
    if value is not None:
        parts.append(f"amount {value:,.2f} {currency}".strip())
    if age:
        parts.append(f"waiting {age_hours} h")
    return Priority(
        band=band, score=score, components=components, explanation=f"{band}: " + ", ".join(parts)
    )
