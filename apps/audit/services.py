"""Write and verify the hash-chained audit log.

``record`` must be called inside the transaction that makes the change it describes,
never from a signal, so the history and the change commit or roll back together.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from .models import AuditEvent

GENESIS_HASH = "0" * 64


@dataclass(frozen=True)
class Actor:
    """Who or what acted: a user, an API source, a routing rule or the system (a sweep)."""

    kind: str
    id: str
    label: str

    @classmethod
    def user(cls, user: Any) -> Actor:
        return cls("user", str(user.pk), user.get_username())

    @classmethod
    def source(cls, source: Any) -> Actor:
        return cls("source", str(source.pk), source.name)

    @classmethod
    def system(cls, label: str) -> Actor:
        return cls("system", "", label)


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the form every digest in the desk is taken over."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


def _event_hash(
    *,
    stream: str,
    sequence: int,
    actor_kind: str,
    actor_id: str,
    actor_label: str,
    action: str,
    before: Any,
    after: Any,
    reason: str,
    created_at: datetime,
    previous_hash: str,
) -> str:
    return sha256_hex(
        {
            "stream": stream,
            "sequence": sequence,
            "actor": [actor_kind, actor_id, actor_label],
            "action": action,
            "before": before,
            "after": after,
            "reason": reason,
            "created_at": created_at.isoformat(),
            "previous_hash": previous_hash,
        }
    )


def _lock_stream(stream: str) -> None:
    # Case streams are already serialized by the case row lock; configuration streams are
    # not, so two admins saving at once would race for the same sequence. A transaction-
    # scoped advisory lock orders them. SQLite's IMMEDIATE transactions serialize anyway.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [stream])


def record(
    *,
    stream: str,
    actor: Actor,
    action: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    reason: str = "",
    at: datetime | None = None,
) -> AuditEvent:
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record must run inside the transaction of the change")
    _lock_stream(stream)
    last = AuditEvent.objects.filter(stream=stream).order_by("-sequence").first()
    sequence = (last.sequence + 1) if last else 1
    previous_hash = last.hash if last else GENESIS_HASH
    created_at = at or timezone.now()
    # Round-trip through JSON so the stored value is exactly what was hashed.
    before_json = json.loads(canonical_json(before or {}))
    after_json = json.loads(canonical_json(after or {}))
    fields = {
        "stream": stream,
        "sequence": sequence,
        "actor_kind": actor.kind,
        "actor_id": actor.id,
        "actor_label": actor.label,
        "action": action,
        "before": before_json,
        "after": after_json,
        "reason": reason,
        "created_at": created_at,
        "previous_hash": previous_hash,
    }
    return AuditEvent.objects.create(**fields, hash=_event_hash(**fields))


@dataclass(frozen=True)
class BrokenLink:
    stream: str
    sequence: int
    problem: str


def verify(streams: list[str] | None = None) -> Iterator[BrokenLink]:
    """Yield every broken link, stream by stream, in order. Empty means the log is intact."""
    events = AuditEvent.objects.order_by("stream", "sequence")
    if streams:
        events = events.filter(stream__in=streams)
    current_stream = None
    previous_hash = GENESIS_HASH
    expected_sequence = 1
    for event in events.iterator(chunk_size=2000):
        if event.stream != current_stream:
            current_stream = event.stream
            previous_hash = GENESIS_HASH
            expected_sequence = 1
        if event.sequence != expected_sequence:
            yield BrokenLink(event.stream, event.sequence, f"expected sequence {expected_sequence}")
        if event.previous_hash != previous_hash:
            yield BrokenLink(event.stream, event.sequence, "previous hash does not match")
        computed = _event_hash(
            stream=event.stream,
            sequence=event.sequence,
            actor_kind=event.actor_kind,
            actor_id=event.actor_id,
            actor_label=event.actor_label,
            action=event.action,
            before=event.before,
            after=event.after,
            reason=event.reason,
            created_at=event.created_at,
            previous_hash=event.previous_hash,
        )
        if computed != event.hash:
            yield BrokenLink(event.stream, event.sequence, "content does not match its hash")
        previous_hash = event.hash
        expected_sequence = event.sequence + 1


def record_config_change(
    *,
    model_label: str,
    actor: Actor,
    action: str,
    object_id: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    reason: str = "",
) -> AuditEvent:
    """Audit a configuration change (admin, seed, command) in its own transaction's scope."""
    with transaction.atomic():
        return record(
            stream=f"config:{model_label}",
            actor=actor,
            action=action,
            before={"id": object_id, **(before or {})},
            after={"id": object_id, **(after or {})},
            reason=reason,
        )
