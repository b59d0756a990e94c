"""What goes to the desk and what comes back, typed.

Requests are TypedDicts (a packet is JSON you build); responses are frozen dataclasses
parsed from the desk's JSON, each keeping the raw body in ``raw`` for fields a newer desk
adds before this client knows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict

SideEffectState = Literal["none_attempted", "unknown", "confirmed_applied", "confirmed_rejected"]
Classification = Literal["public", "internal", "confidential", "restricted"]


class EvidenceItem(TypedDict):
    """One evidence snapshot as the workflow saw it. ``source_timestamp`` is ISO 8601 with a
    timezone (the desk refuses a naive time)."""

    ref: str
    source: str
    source_timestamp: str
    classification: Classification
    content: dict[str, Any]


class Attributes(TypedDict, total=False):
    """Trusted business metadata that routing reads; other keys are kept as sent."""

    tenant: str | None
    region: str | None
    amount: str | None  # a decimal string: JSON has no decimals, and floats round money
    currency: str | None
    initiated_by: str | None


# "class" is a Python keyword, so the packet uses the functional TypedDict syntax.
ReviewPacket = TypedDict(
    "ReviewPacket",
    {
        "workflow_type": str,
        "workflow_version": str,
        "workflow_instance_id": str,
        "checkpoint_id": str,
        "case_ref": str,
        "summary": str,
        "class": str,
        "reason_code": str,
        "resume_handle": NotRequired[str | None],
        "reason_note": NotRequired[str | None],
        "proposed_action": NotRequired[Any],
        "side_effect_state": NotRequired[SideEffectState],
        "policy_version": NotRequired[str | None],
        "policy_decision_ref": NotRequired[str | None],
        "trace_ref": NotRequired[str | None],
        "input_snapshot_ref": NotRequired[str | None],
        "timeline": NotRequired[list[dict[str, Any]]],
        "evidence": NotRequired[list[EvidenceItem]],
        "attributes": NotRequired[Attributes],
        "dedupe_key": NotRequired[str | None],
    },
)


class EventActor(TypedDict):
    id: str
    name: str


class EventData(TypedDict, total=False):
    """The ``data`` of a decision event (webhook body or pull feed)."""

    case_id: str
    case_ref: str
    workflow_type: str
    workflow_version: str
    workflow_instance_id: str
    checkpoint_id: str
    resume_handle: str | None
    resolution: str
    fields: dict[str, Any]
    note: str
    actor: EventActor | None
    decision_policy_version: str
    evidence_version: int
    evidence_digest: str
    decided_at: str
    request: dict[str, Any]  # case.information_requested: what was asked


def _datetime(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


@dataclass(frozen=True)
class Decision:
    resolution: str
    fields: dict[str, Any]
    note: str
    decided_at: datetime | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Decision:
        return cls(
            resolution=str(body["resolution"]),
            fields=dict(body.get("fields") or {}),
            note=str(body.get("note") or ""),
            decided_at=_datetime(body.get("decided_at")),
        )


@dataclass(frozen=True)
class Case:
    """A case as its source sees it (GET /api/v1/cases/{id})."""

    id: str
    state: str
    queue: str
    case_ref: str
    workflow_type: str
    workflow_version: str
    allowed_resolutions: tuple[str, ...]
    version: int
    url: str
    side_effect_state: str
    evidence_version: int
    evidence_digest: str
    close_reason: str
    delivery_status: str
    due_at: datetime | None
    created_at: datetime | None
    decision: Decision | None
    # True when this call created the case (201); False when the desk returned the case
    # already filed under the same dedupe key (200), and for reads.
    created: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], *, created: bool = False) -> Case:
        decision = body.get("decision")
        return cls(
            id=str(body["id"]),
            state=str(body["state"]),
            queue=str(body.get("queue") or ""),
            case_ref=str(body.get("case_ref") or ""),
            workflow_type=str(body.get("workflow_type") or ""),
            workflow_version=str(body.get("workflow_version") or ""),
            allowed_resolutions=tuple(body.get("allowed_resolutions") or ()),
            version=int(body.get("version") or 0),
            url=str(body.get("url") or ""),
            side_effect_state=str(body.get("side_effect_state") or ""),
            evidence_version=int(body.get("evidence_version") or 0),
            evidence_digest=str(body.get("evidence_digest") or ""),
            close_reason=str(body.get("close_reason") or ""),
            delivery_status=str(body.get("delivery_status") or ""),
            due_at=_datetime(body.get("due_at")),
            created_at=_datetime(body.get("created_at")),
            decision=Decision.from_json(decision) if decision else None,
            created=created,
            raw=dict(body),
        )


EventType = Literal["case.decided", "case.information_requested"]


@dataclass(frozen=True)
class DecisionEvent:
    """One event of the desk, from a verified webhook or the pull feed. ``id`` is stable
    across every redelivery (it is the webhook-id): deduplicate by it."""

    id: str
    type: str
    created_at: datetime | None
    data: EventData
    # From the pull feed only: the desk's delivery state of the event when it was listed.
    delivery_status: str = ""
    delivery_attempts: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> DecisionEvent:
        delivery = body.get("delivery") or {}
        return cls(
            id=str(body["id"]),
            type=str(body["type"]),
            created_at=_datetime(body.get("created_at")),
            data=EventData(**(body.get("data") or {})),  # type: ignore[typeddict-item]
            delivery_status=str(delivery.get("status") or ""),
            delivery_attempts=int(delivery.get("attempts") or 0),
            raw=dict(body),
        )

    @property
    def case_id(self) -> str:
        return str(self.data.get("case_id") or "")

    @property
    def is_decision(self) -> bool:
        return self.type == "case.decided"

    @property
    def resolution(self) -> str:
        return str(self.data.get("resolution") or "")

    @property
    def fields(self) -> dict[str, Any]:
        return dict(self.data.get("fields") or {})

    @property
    def resume_handle(self) -> str:
        """The opaque handle the workflow filed (a thread id, a task token), or ""."""
        return str(self.data.get("resume_handle") or "")
