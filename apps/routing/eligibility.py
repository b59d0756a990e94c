"""Eligibility is a hard constraint, checked before any ranking: pure, no database.

A worker may take a case only when every requirement the case carries is met: skills at a
minimum proficiency, certifications, authority (the worker's amount limit covers the case's
amount), language, jurisdiction, data clearance (covering the case's classification and
every evidence item's), segregation of duties, and being on shift. Empty requirements pass,
so a case of a task type that declares nothing is open to every worker of its queue.

Segregation of duties has no exemption, superusers included: nobody decides a case they
initiated (`attributes.initiated_by`), nor a case that corrects a decision they made. There
is no correction flow yet; the cases layer fills `decided_by` from the decision of the case
named in `attributes.corrects_case` (see `apps.cases.access.case_requirements`).

Codes (skills, certifications, languages, jurisdictions) are compared exactly.
`is_eligible` returns every failed constraint, not only the first, so a supervisor sees the
whole gap at once ("needs skill refunds ≥ 3; needs language de").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils.translation import gettext as _

from .models import CLASSIFICATION_RANK

__all__ = ["Reason", "Requirements", "WorkerFacts", "is_eligible", "rank_of"]

UNKNOWN_CLASSIFICATION_RANK = 99  # an unknown label is treated as more sensitive than any


def rank_of(classification: str) -> int:
    ranks: Mapping[str, int] = CLASSIFICATION_RANK
    return ranks.get(classification, UNKNOWN_CLASSIFICATION_RANK)


def _decimal(value: Any) -> Decimal | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


@dataclass(frozen=True)
class WorkerFacts:
    """What the desk knows about a worker, as plain data."""

    username: str
    skills: Mapping[str, int] = field(default_factory=dict)  # skill code -> proficiency
    certifications: frozenset[str] = frozenset()
    amount_limit: Decimal = Decimal("0")
    languages: frozenset[str] = frozenset()
    jurisdictions: frozenset[str] = frozenset()
    clearance: str = "internal"
    on_shift: bool = True

    @classmethod
    def coerce(cls, value: WorkerFacts | Mapping[str, Any]) -> WorkerFacts:
        if isinstance(value, WorkerFacts):
            return value
        return cls(
            username=str(value.get("username") or ""),
            skills={str(k): int(v) for k, v in dict(value.get("skills") or {}).items()},
            certifications=frozenset(value.get("certifications") or ()),
            amount_limit=_decimal(value.get("amount_limit")) or Decimal("0"),
            languages=frozenset(value.get("languages") or ()),
            jurisdictions=frozenset(value.get("jurisdictions") or ()),
            clearance=str(value.get("clearance") or "internal"),
            on_shift=bool(value.get("on_shift", True)),
        )


@dataclass(frozen=True)
class Requirements:
    """What a case requires of whoever takes and decides it.

    `classifications` holds the case's data classification and every evidence item's.
    `jurisdiction` is resolved at filing (a task type's '@region' becomes the case's region;
    a case without a region keeps '@region', which no worker holds, so a supervisor steps in).
    `decided_by` names whoever made a decision this case corrects (segregation of duties).
    """

    skills: Mapping[str, int] = field(default_factory=dict)  # skill code -> min proficiency
    certifications: frozenset[str] = frozenset()
    authority_amount: Decimal | None = None
    language: str = ""
    jurisdiction: str = ""
    classifications: frozenset[str] = frozenset()
    initiated_by: str = ""
    decided_by: frozenset[str] = frozenset()

    @classmethod
    def coerce(cls, value: Requirements | Mapping[str, Any]) -> Requirements:
        if isinstance(value, Requirements):
            return value
        return cls(
            skills=skills_from_list(value.get("skills") or ()),
            certifications=frozenset(value.get("certifications") or ()),
            authority_amount=_decimal(value.get("authority_amount")),
            language=str(value.get("language") or ""),
            jurisdiction=str(value.get("jurisdiction") or ""),
            classifications=frozenset(value.get("classifications") or ()),
            initiated_by=str(value.get("initiated_by") or ""),
            decided_by=frozenset(value.get("decided_by") or ()),
        )


def skills_from_list(skills: Iterable[Any] | Mapping[str, Any]) -> dict[str, int]:
    """A case's `required_skills` ([{"code", "min_proficiency"}]) as {code: min}. A skill
    named twice needs the higher level."""
    if isinstance(skills, Mapping):
        return {str(code): int(level or 0) for code, level in skills.items()}
    wanted: dict[str, int] = {}
    for item in skills:
        if isinstance(item, Mapping):
            code, level = str(item.get("code") or ""), int(item.get("min_proficiency") or 0)
        else:
            code, level = str(item), 0
        if code:
            wanted[code] = max(level, wanted.get(code, 0))
    return wanted


@dataclass(frozen=True)
class Reason:
    """One unmet constraint. `str()` is about the worker ("needs skill refunds ≥ 3"), for
    supervisors and alerts; `for_you` addresses the worker on their own pages."""

    code: str
    text: str
    for_you: str

    def __str__(self) -> str:
        return self.text


def is_eligible(
    worker_facts: WorkerFacts | Mapping[str, Any],
    requirements: Requirements | Mapping[str, Any],
) -> tuple[bool, list[Reason]]:
    """(eligible, reasons): every hard constraint the worker fails, in a stable order."""
    worker = WorkerFacts.coerce(worker_facts)
    needs = Requirements.coerce(requirements)
    reasons: list[Reason] = []

    if not worker.on_shift:
        reasons.append(
            Reason("shift", _("is off shift"), _("You are off shift: go on shift to take cases."))
        )
    for code, level in sorted(needs.skills.items()):
        has = worker.skills.get(code)
        if has is not None and has >= level:
            continue
        params = {"skill": code, "level": level, "has": has}
        if has is None:
            reasons.append(
                Reason(
                    "skill",
                    _("needs skill %(skill)s ≥ %(level)s") % params,
                    _("This case needs skill %(skill)s at level %(level)s or above.") % params,
                )
            )
        else:
            reasons.append(
                Reason(
                    "skill",
                    _("needs skill %(skill)s ≥ %(level)s (has %(has)s)") % params,
                    _("This case needs skill %(skill)s at level %(level)s; yours is %(has)s.")
                    % params,
                )
            )
    for certification in sorted(needs.certifications - worker.certifications):
        params = {"certification": certification}
        reasons.append(
            Reason(
                "certification",
                _("needs certification %(certification)s") % params,
                _("This case needs the %(certification)s certification.") % params,
            )
        )
    if needs.authority_amount is not None and worker.amount_limit < needs.authority_amount:
        params = {
            "amount": f"{needs.authority_amount:,.2f}",
            "limit": f"{worker.amount_limit:,.2f}",
        }
        reasons.append(
            Reason(
                "authority",
                _("needs authority for %(amount)s (limit %(limit)s)") % params,
                _("This case needs authority for %(amount)s; your limit is %(limit)s.") % params,
            )
        )
    if needs.language and needs.language not in worker.languages:
        params = {"language": needs.language}
        reasons.append(
            Reason(
                "language",
                _("needs language %(language)s") % params,
                _("This case needs language %(language)s.") % params,
            )
        )
    if needs.jurisdiction and needs.jurisdiction not in worker.jurisdictions:
        params = {"jurisdiction": needs.jurisdiction}
        reasons.append(
            Reason(
                "jurisdiction",
                _("needs jurisdiction %(jurisdiction)s") % params,
                _("This case needs jurisdiction %(jurisdiction)s.") % params,
            )
        )
    clearance = rank_of(worker.clearance)
    above = sorted(c for c in needs.classifications if rank_of(c) > clearance)
    if above:
        params = {"needed": ", ".join(above), "clearance": worker.clearance}
        reasons.append(
            Reason(
                "clearance",
                _("clearance %(clearance)s does not cover %(needed)s") % params,
                _("Your data clearance does not cover this case's evidence."),
            )
        )
    if worker.username and needs.initiated_by == worker.username:
        reasons.append(
            Reason(
                "segregation",
                _("initiated this request (segregation of duties)"),
                _("Segregation of duties: you initiated this request, so you may not decide it."),
            )
        )
    if worker.username and worker.username in needs.decided_by:
        reasons.append(
            Reason(
                "segregation",
                _("made the decision this case corrects (segregation of duties)"),
                _(
                    "Segregation of duties: this case corrects a decision you made, so you may"
                    " not decide it."
                ),
            )
        )
    return not reasons, reasons
