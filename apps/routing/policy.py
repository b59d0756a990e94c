"""Pure routing policy: data in, decision and explanation out. No database, no cases import.

Three versioned policies live here, each returning its inputs, its result and a one-line
explanation so a person can see why:
- `classify`: which queue (first matching routing rule over trusted metadata, else triage);
- `compute_severity`: how bad it is (customer impact, money, compliance, time sensitivity);
- `prioritize`: how urgent it is now (band P1-P4 from a score of named components).
Business calendars (`due_at`, `working_seconds_between`) are in `calendar.py`.

Explanations are stored with the case and in the audit log, so they are written once, in
plain English, rather than translated for whoever happened to file the case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from .calendar import CalendarSpec, due_at, working_seconds_between

__all__ = [
    "CalendarSpec",
    "Priority",
    "PriorityOverride",
    "RoutingDecision",
    "SeverityResult",
    "classify",
    "compute_severity",
    "due_at",
    "prioritize",
    "task_type_key",
    "working_seconds_between",
]

ROUTING_POLICY_VERSION = "routing-2026.2"
SEVERITY_POLICY_VERSION = "severity-2026.1"
PRIORITY_POLICY_VERSION = "priority-2026.2"

SEVERITY_LEVELS = ("low", "medium", "high", "critical")
SEVERITY_POINTS = {"low": 10, "medium": 25, "high": 45, "critical": 70}


def _amount(value: Any) -> Decimal | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


# --- classification -------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingDecision:
    queue: str
    rule_id: int | None
    explanation: str
    rule_version: int | None = None
    policy_version: str = ROUTING_POLICY_VERSION


def task_type_key(workflow_type: str, exception_class: str) -> str:
    """How a task type is named in routing facts and a queue's accepted list."""
    return f"{workflow_type}/{exception_class}"


def classify(
    facts: Mapping[str, Any], rules: Iterable[Mapping[str, Any]], fallback_queue: str
) -> RoutingDecision:
    """First active rule (in order) whose every non-empty condition matches the facts.

    Facts are trusted metadata only: workflow_type, exception_class, tenant, region,
    severity (as computed by `compute_severity`), amount, and task_type
    (`task_type_key(...)`). A rule may carry `queue_accepts`, the task types its queue
    accepts (empty: any); when the matched queue does not accept the case's task type
    the case goes to the fallback (triage) queue and the explanation says which rule
    matched and why it was not used. No match: the fallback queue.

    Rules are versioned: every saved change in the admin bumps `RoutingRule.version`
    (RoutingRuleAdmin.save_model), and the decision carries the id and version that
    matched, so a case filed last month still says which wording of a rule routed it.
    """
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
            name = rule.get("name", rule.get("id"))
            version = rule.get("version")
            matched = f"rule '{name}' v{version} ({why})" if version else f"rule '{name}' ({why})"
            accepts = rule.get("queue_accepts") or ()
            task_type = str(facts.get("task_type") or "")
            if accepts and task_type not in accepts:
                return RoutingDecision(
                    queue=fallback_queue,
                    rule_id=rule.get("id"),
                    rule_version=version,
                    explanation=(
                        f"{matched} chose {rule['queue']}, which does not accept "
                        f"{task_type or 'this task type'}: {fallback_queue}"
                    ),
                )
            return RoutingDecision(
                queue=str(rule["queue"]),
                rule_id=rule.get("id"),
                rule_version=version,
                explanation=matched,
            )
    return RoutingDecision(
        queue=fallback_queue,
        rule_id=None,
        explanation=f"no routing rule matched: {fallback_queue}",
    )


# --- severity ---------------------------------------------------------------------------

# Model confidence describes the model, not the business harm; it never sets severity.
IGNORED_SEVERITY_INPUTS = ("confidence", "model_confidence", "ai_confidence")

LEVEL_WORDS: dict[str, str | None] = {
    "none": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "critical": "critical",
}
# Affected customers (a count) -> level, largest first.
AFFECTED_CUSTOMERS = ((1000, "critical"), (100, "high"), (10, "medium"), (1, "low"))
# Financial exposure (case amount, in the case's currency) -> level, largest first.
# Money alone stops at "high": with the amount component of priority capped as well, this
# bounds what money can add to a score below any safety, regulatory or contractual deadline.
FINANCIAL_EXPOSURE = ((Decimal("100000"), "high"), (Decimal("10000"), "medium"))
TIME_SENSITIVE_LEVEL = "high"
TRUE_WORDS = {"true", "yes", "1"}


@dataclass(frozen=True)
class SeverityResult:
    level: str
    inputs: dict[str, Any]
    explanation: str
    policy_version: str = SEVERITY_POLICY_VERSION


def _customer_impact(value: Any) -> tuple[str | None, str]:
    if isinstance(value, bool):
        return None, ""
    if isinstance(value, int | float | Decimal) or (
        isinstance(value, str) and value.strip().isdigit()
    ):
        count = int(value)
        for threshold, level in AFFECTED_CUSTOMERS:
            if count >= threshold:
                return level, f"{count} customers affected"
        return None, ""
    text = str(value or "").strip().lower()
    if LEVEL_WORDS.get(text):
        return LEVEL_WORDS[text], f"customer impact {text}"
    return None, ""


def _compliance(value: Any) -> tuple[str | None, str]:
    if value is True or str(value).strip().lower() in TRUE_WORDS:
        return "high", "compliance risk"
    text = str(value or "").strip().lower()
    if LEVEL_WORDS.get(text):
        return LEVEL_WORDS[text], f"compliance risk {text}"
    return None, ""


def _is_true(value: Any) -> bool:
    return value is True or str(value).strip().lower() in TRUE_WORDS


def compute_severity(*, class_default: str, attributes: Mapping[str, Any]) -> SeverityResult:
    """Severity = the highest level any factor calls for, never below the class default.

    Factors: customer impact (none|low|medium|high, or a count of affected customers),
    financial exposure (the amount, capped at high), compliance risk (true or a level) and
    time sensitivity (true raises to high). Model confidence is deliberately not a factor:
    a confident model can be confidently wrong about something that matters.
    """
    factors: list[tuple[str, str]] = []  # (level, why); the class default goes last so a
    # specific fact is named first when it calls for the same level
    impact_level, impact_why = _customer_impact(attributes.get("customer_impact"))
    if impact_level:
        factors.append((impact_level, impact_why))
    amount = _amount(attributes.get("amount"))
    if amount is not None:
        for threshold, level in FINANCIAL_EXPOSURE:
            if abs(amount) >= threshold:
                factors.append((level, f"amount {_money(amount)}"))
                break
    compliance_level, compliance_why = _compliance(attributes.get("compliance_risk"))
    if compliance_level:
        factors.append((compliance_level, compliance_why))
    time_sensitive = _is_true(attributes.get("time_sensitive"))
    if time_sensitive:
        factors.append((TIME_SENSITIVE_LEVEL, "time sensitive"))
    if class_default in SEVERITY_LEVELS:
        factors.append((class_default, "class default"))

    rank = SEVERITY_LEVELS.index
    level = max((f[0] for f in factors), key=rank, default="medium")
    ordered = sorted(factors, key=lambda f: -rank(f[0]))
    ignored = [key for key in IGNORED_SEVERITY_INPUTS if key in attributes]
    inputs: dict[str, Any] = {
        "class_default": class_default,
        "customer_impact": attributes.get("customer_impact"),
        "amount": None if amount is None else str(amount),
        "compliance_risk": attributes.get("compliance_risk"),
        "time_sensitive": time_sensitive,
        "factors": {why: factor_level for factor_level, why in ordered},
    }
    if ignored:
        inputs["ignored"] = ignored
    explanation = f"{level}: " + ", ".join(f"{why} ({lvl})" for lvl, why in ordered)
    if ignored:
        explanation += "; model confidence not used"
    return SeverityResult(level=level, inputs=inputs, explanation=explanation[:300])


# --- priority ---------------------------------------------------------------------------

MAX_AMOUNT_POINTS = 15
# A deadline someone outside can hold us to. Each is worth more than everything money can
# add to a score (the amount component plus money raising severity from low to high), so
# an amount, however large, never outranks such a deadline.
DEADLINE_POINTS = {"safety": 70, "regulatory": 60, "contractual": 55}
CUSTOMER_TIER_POINTS = {"strategic": 15, "enterprise": 10, "premium": 10, "standard": 0}
POINTS_PER_BLOCKED_TASK = 5
MAX_BLOCKING_POINTS = 20
HOURS_PER_AGE_POINT = 4
MAX_AGE_POINTS = 30
BANDS = (("P1", 85), ("P2", 60), ("P3", 35), ("P4", -(10**9)))


@dataclass(frozen=True)
class Priority:
    band: str
    score: int
    components: dict[str, int] = field(default_factory=dict)
    explanation: str = ""
    policy_version: str = PRIORITY_POLICY_VERSION
    computed_band: str = ""  # the band before a manual override ("" when none is active)


@dataclass(frozen=True)
class PriorityOverride:
    band: str
    by: str
    reason: str
    expires_at: datetime | None

    def active(self, now: datetime) -> bool:
        # An override without an expiry is not honoured: every override must lapse.
        return bool(self.band) and self.expires_at is not None and self.expires_at > now


def _format_minutes(minutes: int) -> str:
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // (24 * 60)} d"


def _due_phrase(minutes_left: int) -> str:
    if minutes_left < 0:
        return f"overdue by {_format_minutes(-minutes_left)}"
    return f"due in {_format_minutes(minutes_left)}"


def _proximity_points(minutes_left: int) -> int:
    if minutes_left <= 0:
        return 40
    if minutes_left <= 60:
        return 30
    if minutes_left <= 240:
        return 20
    if minutes_left <= 24 * 60:
        return 10
    return 0


def _amount_points(value: Decimal | None) -> int:
    if value is None:
        return 0
    value = abs(value)
    if value >= 100_000:
        return MAX_AMOUNT_POINTS
    if value >= 10_000:
        return 10
    if value >= 1_000:
        return 5
    return 0


def _blocked_count(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    try:
        return max(0, int(str(value))) if value not in (None, "") else 0
    except ValueError:
        return 0


def prioritize(
    *,
    severity: str,
    amount: Any,
    currency: str,
    due: datetime,
    created_at: datetime,
    now: datetime,
    deadline_kind: str = "",
    customer_tier: str = "",
    blocking: Any = 0,
    override: PriorityOverride | None = None,
) -> Priority:
    """Score = business consequence (severity, capped amount, deadline kind) + due-time
    proximity + customer class + dependency blocking + age, mapped to bands P1..P4.

    Age makes an old case rise even while nothing else changes. An active manual override
    sets the band; the computed score and components are kept beside it.
    """
    minutes_left = int((due - now).total_seconds() // 60)
    value = _amount(amount)
    deadline = str(deadline_kind or "").strip().lower()
    tier = str(customer_tier or "").strip().lower()
    blocked = _blocked_count(blocking)
    age_hours = max(0, int((now - created_at).total_seconds() // 3600))
    components = {
        "severity": SEVERITY_POINTS.get(severity, SEVERITY_POINTS["medium"]),
        "due": _proximity_points(minutes_left),
        "deadline": DEADLINE_POINTS.get(deadline, 0),
        "amount": _amount_points(value),
        "customer": CUSTOMER_TIER_POINTS.get(tier, 0),
        "blocking": min(MAX_BLOCKING_POINTS, POINTS_PER_BLOCKED_TASK * blocked),
        "age": min(MAX_AGE_POINTS, age_hours // HOURS_PER_AGE_POINT),
    }
    score = sum(components.values())
    band = next(name for name, floor in BANDS if score >= floor)

    parts = [f"{severity} severity", _due_phrase(minutes_left)]
    if components["deadline"]:
        parts.append(f"{deadline} deadline")
    if value is not None:
        parts.append(f"amount {_money(value)} {currency}".strip())
    if components["customer"]:
        parts.append(f"{tier} customer")
    if blocked:
        parts.append(f"blocks {blocked} task{'s' if blocked != 1 else ''}")
    if components["age"]:
        parts.append(f"waiting {_format_minutes(age_hours * 60)}")
    explanation = f"{band}: " + ", ".join(parts)

    if override is not None and override.active(now):
        return Priority(
            band=override.band,
            score=score,
            components=components,
            explanation=(
                f"{override.band} (override by {override.by}: {override.reason}); "
                f"computed {explanation}"
            )[:300],
            computed_band=band,
        )
    return Priority(band=band, score=score, components=components, explanation=explanation[:300])
