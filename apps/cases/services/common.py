from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from apps.audit.services import sha256_hex
from apps.routing.policy import PriorityOverride, prioritize

from ..models import Case, EvidenceItem


def evidence_item_digest(item: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of one snapshot (sorted keys, no whitespace, UTF-8)."""
    return sha256_hex(
        {
            "ref": item["ref"],
            "source": item["source"],
            "source_timestamp": item["source_timestamp"].isoformat()
            if isinstance(item["source_timestamp"], datetime)
            else str(item["source_timestamp"]),
            "classification": item["classification"],
            "content": item["content"],
        }
    )


def case_evidence_digest(item_digests: list[str]) -> str:
    return sha256_hex(item_digests)


def add_evidence(
    case: Case, items: list[dict[str, Any]], *, version: int, added_by: str, at: datetime
) -> list[EvidenceItem]:
    rows = [
        EvidenceItem(
            case=case,
            version=version,
            position=position,
            ref=item["ref"],
            source=item["source"],
            source_timestamp=item["source_timestamp"],
            classification=item["classification"],
            content=item["content"],
            digest=evidence_item_digest(item),
            added_at=at,
            added_by=added_by,
        )
        for position, item in enumerate(items)
    ]
    EvidenceItem.objects.bulk_create(rows)
    return rows


def priority_override_of(case: Case) -> PriorityOverride | None:
    if not case.priority_override_band:
        return None
    # No person: a rule set it (the escalation ladder's priority bump).
    by = case.priority_override_by.get_username() if case.priority_override_by_id else "rule"
    return PriorityOverride(
        band=case.priority_override_band,
        by=by,
        reason=case.priority_override_reason,
        expires_at=case.priority_override_expires_at,
    )


def refresh_priority(case: Case, *, now: datetime | None = None) -> None:
    """Recompute the case's priority from its facts and the clock (nothing is saved).

    An active manual override (band set, expiry in the future) decides the band; the
    computed score and components are still stored beside it. Once the override has
    expired the computed band applies again, even before the expiry sweep clears it.
    """
    attributes = case.attributes or {}
    priority = prioritize(
        severity=case.severity,
        amount=attributes.get("amount"),
        currency=str(attributes.get("currency") or ""),
        due=case.due_at,
        created_at=case.created_at,
        now=now or timezone.now(),
        deadline_kind=str(attributes.get("deadline_kind") or ""),
        customer_tier=str(attributes.get("customer_tier") or ""),
        blocking=attributes.get("blocking"),
        override=priority_override_of(case),
    )
    case.priority_band = priority.band
    case.priority_score = priority.score
    case.priority_components = priority.components
    case.priority_policy_version = priority.policy_version
    case.priority_explanation = priority.explanation
