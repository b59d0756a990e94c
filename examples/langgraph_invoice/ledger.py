"""The business system the workflow acts on, in one SQLite file.

``side_effects`` stands in for the destination (the ERP, the payment provider): every
application is a new row, so a decision applied twice shows up as two rows. ``resumes`` is
the receiver's durable record of which thread it resumed with which event; it outlives a
restart, which an in-process lock does not.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS side_effects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resumes (
    thread_id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    resolution TEXT NOT NULL,
    resumed_at TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class SideEffect:
    id: int
    thread_id: str
    case_id: str
    kind: str
    detail: dict[str, Any]
    idempotency_key: str


class Ledger:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        connection = sqlite3.connect(self.path, timeout=30)
        try:
            connection.executescript(SCHEMA)  # commits by itself
        finally:
            connection.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # A connection per use: the receiver's threads and the consumer process share the
        # file safely; BEGIN IMMEDIATE takes the write lock up front instead of failing late.
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()

    # --- the destination ----------------------------------------------------------------
    def apply(
        self,
        *,
        thread_id: str,
        case_id: str,
        kind: str,
        detail: dict[str, Any],
        idempotency_key: str,
    ) -> int:
        """Apply a business effect (match the invoice, issue the refund). Returns its id.

        A real destination should be given ``idempotency_key`` and refuse a second effect
        under it; this one records every call so tests can count what really happened."""
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO side_effects (thread_id, case_id, kind, detail, idempotency_key, "
                "applied_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    case_id,
                    kind,
                    json.dumps(detail, sort_keys=True),
                    idempotency_key,
                    datetime.now(tz=UTC).isoformat(),
                ),
            )
            return int(cursor.lastrowid or 0)

    def side_effects(self, *, thread_id: str | None = None) -> list[SideEffect]:
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT id, thread_id, case_id, kind, detail, idempotency_key FROM side_effects "
                "WHERE ? IS NULL OR thread_id = ? ORDER BY id",
                (thread_id, thread_id),
            ).fetchall()
        return [
            SideEffect(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5]) for row in rows
        ]

    # --- the receiver's record ----------------------------------------------------------
    def resumed_by(self, thread_id: str) -> str | None:
        """The event id this thread was resumed with, or None."""
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT event_id FROM resumes WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return str(row[0]) if row else None

    def record_resume(
        self, *, thread_id: str, event_id: str, case_id: str, resolution: str
    ) -> bool:
        """Record that the thread was resumed; False if it already was."""
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO resumes (thread_id, event_id, case_id, resolution, "
                "resumed_at) VALUES (?, ?, ?, ?, ?)",
                (thread_id, event_id, case_id, resolution, datetime.now(tz=UTC).isoformat()),
            )
            return cursor.rowcount == 1
