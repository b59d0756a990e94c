"""Verify the desk's webhooks: Standard Webhooks signature, timestamp tolerance, and
rejection of a webhook-id seen before.

The signature scheme is the ``standardwebhooks`` package's own (its secret parsing and
``sign``); the timestamp is checked here because the package's ``verify`` fixes the
tolerance at five minutes and reads the wall clock itself.

A replay is rejected with WebhookReplayed rather than silently accepted, because what to
answer depends on the receiver: one that has finished acting on the event answers 2xx so
the desk stops resending; one that cannot tell should check its own records (see
examples/langgraph_invoice/receiver.py).
"""

from __future__ import annotations

import hmac
import json
import sqlite3
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, runtime_checkable

from standardwebhooks.webhooks import Webhook

from .models import DecisionEvent

__all__ = [
    "InMemorySeenStore",
    "InvalidWebhook",
    "SeenStore",
    "SqliteSeenStore",
    "StaleWebhook",
    "WebhookRejected",
    "WebhookReplayed",
    "WebhookVerifier",
]


class WebhookRejected(Exception):
    """The request must not be acted on. Answer 4xx (see the subclasses)."""


class InvalidWebhook(WebhookRejected):
    """Missing headers, a signature that does not match, or a body that is not an event."""


class StaleWebhook(WebhookRejected):
    """The signed timestamp is outside the tolerance: an old request replayed, or a clock
    far off."""


class WebhookReplayed(WebhookRejected):
    """Authentic and fresh, but this webhook-id was received before."""

    def __init__(self, message: str, *, event: DecisionEvent) -> None:
        super().__init__(message)
        self.event = event


@runtime_checkable
class SeenStore(Protocol):
    """Remembers the webhook-ids a receiver has accepted."""

    def add_if_new(self, webhook_id: str) -> bool:
        """Record the id; True if it was not there before. Must be atomic: of two callers
        racing with one id, exactly one gets True."""
        ...


class InMemorySeenStore:
    """For one process (tests, a single receiver). Forgets everything on restart."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def add_if_new(self, webhook_id: str) -> bool:
        with self._lock:
            if webhook_id in self._seen:
                return False
            self._seen.add(webhook_id)
            return True

    def __contains__(self, webhook_id: object) -> bool:
        with self._lock:
            return webhook_id in self._seen


class SqliteSeenStore:
    """Durable across restarts and shared by processes on one machine. The primary key
    makes ``add_if_new`` atomic: of two inserts of one id, one inserts a row."""

    def __init__(self, path: str | Path, *, table: str = "seen_webhooks") -> None:
        if not table.isidentifier():
            raise ValueError("table must be a plain identifier")
        self.path = str(path)
        self.table = table
        with self._connect() as connection:
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {table} "  # noqa: S608 (checked identifier)
                "(webhook_id TEXT PRIMARY KEY, seen_at TEXT NOT NULL)"
            )

    def _connect(self) -> sqlite3.Connection:
        # A connection per call: safe from any thread, and a busy file waits, not fails.
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def add_if_new(self, webhook_id: str) -> bool:
        connection = self._connect()
        try:
            cursor = connection.execute(
                f"INSERT OR IGNORE INTO {self.table} (webhook_id, seen_at) VALUES (?, ?)",  # noqa: S608
                (webhook_id, datetime.now(tz=UTC).isoformat()),
            )
            return cursor.rowcount == 1
        finally:
            connection.close()

    def prune(self, *, older_than: timedelta) -> int:
        """Forget ids older than this (keep them longer than the desk's whole retry
        schedule, or a late redelivery would be taken as new)."""
        cutoff = (datetime.now(tz=UTC) - older_than).isoformat()
        connection = self._connect()
        try:
            cursor = connection.execute(
                f"DELETE FROM {self.table} WHERE seen_at < ?",  # noqa: S608
                (cutoff,),
            )
            return cursor.rowcount
        finally:
            connection.close()


class WebhookVerifier:
    """Checks one workflow type's webhooks, in this order: the headers are there, the
    timestamp is within ``tolerance`` of now, the signature matches the ``whsec_`` secret,
    the body is an event whose id is the webhook-id, and the id is new to ``seen_store``.
    The id is recorded only once everything else passed, so a forged request cannot burn
    a real event's id."""

    def __init__(
        self,
        secret: str,
        seen_store: SeenStore,
        *,
        tolerance: timedelta = timedelta(minutes=5),
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._webhook = Webhook(secret)
        self.seen_store = seen_store
        self.tolerance = tolerance
        self._clock = clock or (lambda: datetime.now(tz=UTC))

    def verify(self, body: bytes | str, headers: Mapping[str, str]) -> DecisionEvent:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        lowered = {name.lower(): value for name, value in headers.items()}
        webhook_id = lowered.get("webhook-id", "")
        timestamp_header = lowered.get("webhook-timestamp", "")
        signatures = lowered.get("webhook-signature", "")
        if not (webhook_id and timestamp_header and signatures):
            raise InvalidWebhook("Missing webhook-id, webhook-timestamp or webhook-signature.")
        try:
            timestamp = datetime.fromtimestamp(int(timestamp_header), tz=UTC)
        except (ValueError, OverflowError, OSError) as error:
            raise InvalidWebhook("webhook-timestamp is not Unix seconds.") from error
        skew = abs(self._clock() - timestamp)
        if skew > self.tolerance:
            raise StaleWebhook(
                f"webhook-timestamp is {int(skew.total_seconds())} s from now; "
                f"the tolerance is {int(self.tolerance.total_seconds())} s."
            )
        expected = self._webhook.sign(webhook_id, timestamp, text).split(",", 1)[1]
        offered = [
            part.split(",", 1)[1]
            for part in signatures.split()
            if part.startswith("v1,") and "," in part
        ]
        if not any(hmac.compare_digest(expected, candidate) for candidate in offered):
            raise InvalidWebhook("No matching signature.")
        try:
            event = DecisionEvent.from_json(json.loads(text))
        except (ValueError, KeyError, TypeError) as error:
            raise InvalidWebhook("The body is not a desk event.") from error
        if event.id != webhook_id:
            raise InvalidWebhook("The body's id is not the webhook-id.")
        if not self.seen_store.add_if_new(webhook_id):
            raise WebhookReplayed(f"Webhook {webhook_id} was received before.", event=event)
        return event
