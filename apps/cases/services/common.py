from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from apps.audit.services import sha256_hex
from apps.routing.policy import prioritize

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


def refresh_priority(case: Case, *, now: datetime | None = None) -> None:
    priority = prioritize(
        severity=case.severity,
        amount=case.attributes.get("amount"),
        currency=str(case.attributes.get("currency") or ""),
        due=case.due_at,
        created_at=case.created_at,
        now=now or timezone.now(),
    )
    case.priority_band = priority.band
    case.priority_score = priority.score
    case.priority_components = priority.components
    case.priority_policy_version = priority.policy_version
    case.priority_explanation = priority.explanation
