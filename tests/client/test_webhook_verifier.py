"""The webhook verifier: Standard Webhooks signatures as the desk makes them, a timestamp
tolerance, and a store of seen webhook-ids that turns a replay into WebhookReplayed."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from exception_desk_client import (
    InMemorySeenStore,
    InvalidWebhook,
    SqliteSeenStore,
    StaleWebhook,
    WebhookReplayed,
    WebhookVerifier,
)

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # base64 of 24 bytes
OTHER_SECRET = "whsec_" + "dGhpcyBpcyBhbm90aGVyIHNlY3JldCEh"


def signed(
    event_id: str = "evt_01decided",
    *,
    at: datetime | None = None,
    secret: str = SECRET,
    data: dict[str, Any] | None = None,
) -> tuple[bytes, dict[str, str]]:
    """A request exactly as the desk's relay sends it (apps/cases/services/delivery.py)."""
    at = at or datetime.now(tz=UTC)
    body = json.dumps(
        {
            "id": event_id,
            "type": "case.decided",
            "created_at": "2026-08-31T15:00:00+00:00",
            "data": data
            or {
                "case_id": "exc_01",
                "workflow_type": "invoice_match",
                "workflow_instance_id": "thread-1",
                "checkpoint_id": "cp-1",
                "resume_handle": "thread-1",
                "resolution": "select_po",
                "fields": {"po_number": "po_781"},
            },
        },
        separators=(",", ":"),
        sort_keys=True,
    )
    headers = {
        "content-type": "application/json",
        "webhook-id": event_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(event_id, at, body),
    }
    return body.encode(), headers


def test_a_genuine_webhook_becomes_the_decision_event():
    body, headers = signed()
    event = WebhookVerifier(SECRET, InMemorySeenStore()).verify(body, headers)

    assert (event.id, event.type, event.case_id) == ("evt_01decided", "case.decided", "exc_01")
    assert (event.resolution, event.fields) == ("select_po", {"po_number": "po_781"})
    assert event.resume_handle == "thread-1"


def test_a_replayed_webhook_id_is_rejected_even_when_freshly_signed():
    verifier = WebhookVerifier(SECRET, InMemorySeenStore())
    verifier.verify(*signed())
    # Byte for byte the same request, and the desk's retry (new timestamp, new signature).
    for body, headers in [signed(), signed(at=datetime.now(tz=UTC) + timedelta(seconds=30))]:
        with pytest.raises(WebhookReplayed) as raised:
            verifier.verify(body, headers)
        assert raised.value.event.id == "evt_01decided"


@pytest.mark.parametrize("offset", [timedelta(minutes=-6), timedelta(minutes=6)])
def test_a_timestamp_outside_the_tolerance_is_rejected_without_using_up_the_id(offset):
    verifier = WebhookVerifier(SECRET, InMemorySeenStore())
    with pytest.raises(StaleWebhook):
        verifier.verify(*signed(at=datetime.now(tz=UTC) + offset))

    assert verifier.verify(*signed()).id == "evt_01decided"


def test_the_tolerance_is_the_verifiers_not_the_librarys_fixed_five_minutes():
    eight_minutes_ago = datetime.now(tz=UTC) - timedelta(minutes=8)
    lenient = WebhookVerifier(SECRET, InMemorySeenStore(), tolerance=timedelta(minutes=10))
    assert lenient.verify(*signed(at=eight_minutes_ago)).id == "evt_01decided"

    strict = WebhookVerifier(SECRET, InMemorySeenStore(), tolerance=timedelta(seconds=30))
    with pytest.raises(StaleWebhook):
        strict.verify(*signed(at=datetime.now(tz=UTC) - timedelta(minutes=1)))


def test_forged_requests_are_rejected_and_cannot_burn_a_real_events_id():
    seen = InMemorySeenStore()
    verifier = WebhookVerifier(SECRET, seen)
    body, headers = signed()
    tampered = body.replace(b"po_781", b"po_799")
    with pytest.raises(InvalidWebhook):
        verifier.verify(tampered, headers)
    with pytest.raises(InvalidWebhook):
        verifier.verify(*signed(secret=OTHER_SECRET))
    with pytest.raises(InvalidWebhook):
        verifier.verify(body, {k: v for k, v in headers.items() if k != "webhook-signature"})

    assert "evt_01decided" not in seen
    assert verifier.verify(body, headers).id == "evt_01decided"


def test_a_signed_body_must_carry_the_webhook_id_it_was_sent_under():
    body, headers = signed("evt_a")
    other_body, _ = signed("evt_b")
    headers["webhook-signature"] = Webhook(SECRET).sign(
        "evt_a",
        datetime.fromtimestamp(int(headers["webhook-timestamp"]), tz=UTC),
        other_body.decode(),
    )
    with pytest.raises(InvalidWebhook):
        WebhookVerifier(SECRET, InMemorySeenStore()).verify(other_body, headers)


def test_the_sqlite_store_remembers_ids_across_a_restart(tmp_path):
    path = tmp_path / "seen.sqlite"
    WebhookVerifier(SECRET, SqliteSeenStore(path)).verify(*signed())

    after_restart = WebhookVerifier(SECRET, SqliteSeenStore(path))
    with pytest.raises(WebhookReplayed):
        after_restart.verify(*signed())


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
def test_of_many_racing_adds_of_one_id_exactly_one_wins(tmp_path, store_kind):
    store = InMemorySeenStore() if store_kind == "memory" else SqliteSeenStore(tmp_path / "s")
    start = threading.Barrier(8)
    results: list[bool] = []
    lock = threading.Lock()

    def add() -> None:
        start.wait()
        outcome = store.add_if_new("evt_race")
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=add) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert sorted(results) == [False] * 7 + [True]
