"""The audit log is append-only and tamper-evident: every transition is chained per stream,
PostgreSQL refuses UPDATE and DELETE, and verify_audit finds a row changed behind the
application's back, naming its stream and sequence."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from apps.audit.models import AuditEvent
from apps.audit.services import GENESIS_HASH, _event_hash, verify
from apps.cases.models import Case
from apps.cases.services import ack_event
from tests.delivery.helpers import claim_and_decide

LIFECYCLE = ["case.filed", "case.claimed", "case.decided", "case.resumed"]


@pytest.fixture
def resolved_case(file_invoice_case, worker, api_source) -> Case:
    """A full history: filed, claimed, decided, and resumed (acknowledged on the pull feed)."""
    case, event = claim_and_decide(file_invoice_case(), worker)
    ack_event(source=api_source[0], event_id=event.pk)
    return case


def stream_of(case: Case) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(stream=case.pk).order_by("sequence"))


def verify_audit_output(*streams: str) -> str:
    out = StringIO()
    call_command("verify_audit", *[f"--stream={s}" for s in streams], stdout=out)
    return out.getvalue()


@contextmanager
def disabled_trigger(name: str) -> Iterator[None]:
    """Tamper as someone with direct database access would: switch the guard off."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE audit_auditevent DISABLE TRIGGER {name}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE audit_auditevent ENABLE TRIGGER {name}")


def test_every_transition_of_a_case_is_chained_in_order(resolved_case, worker):
    events = stream_of(resolved_case)

    assert [e.action for e in events] == LIFECYCLE
    assert [e.sequence for e in events] == list(range(1, len(LIFECYCLE) + 1))
    assert events[0].previous_hash == GENESIS_HASH
    for previous, current in zip(events, events[1:], strict=False):
        assert current.previous_hash == previous.hash
    assert len({e.hash for e in events}) == len(events)
    claimed = events[1]
    assert (claimed.actor_kind, claimed.actor_label) == ("user", worker.get_username())
    assert (claimed.before["state"], claimed.after["state"]) == ("open", "claimed")
    assert events[3].actor_kind == "source"
    # Before/after keep digests and ids, never evidence content.
    assert "PO-781" not in str([(e.before, e.after) for e in events])


def test_verify_audit_passes_on_a_normal_history(resolved_case):
    assert list(verify()) == []
    assert "audit log intact" in verify_audit_output()


def test_database_refuses_to_update_an_audit_event(resolved_case):
    event = stream_of(resolved_case)[1]

    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE audit_auditevent SET reason = %s WHERE id = %s", ["edited", event.pk]
        )
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(actor_label="someone else")

    event.refresh_from_db()
    assert event.reason == stream_of(resolved_case)[1].reason
    assert event.actor_label != "someone else"


def test_database_refuses_to_delete_an_audit_event(resolved_case):
    event = stream_of(resolved_case)[2]

    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(stream=resolved_case.pk).delete()

    assert [e.action for e in stream_of(resolved_case)] == LIFECYCLE


def test_verify_audit_names_the_stream_and_sequence_of_a_row_changed_behind_its_back(
    resolved_case, file_invoice_case
):
    untouched = file_invoice_case()
    decided = stream_of(resolved_case)[2]
    with disabled_trigger("audit_event_no_update"), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE audit_auditevent SET reason = %s WHERE id = %s",
            ["nothing to see here", decided.pk],
        )

    with pytest.raises(CommandError) as broken:
        call_command("verify_audit")

    message = str(broken.value)
    assert f"stream {resolved_case.pk} event 3" in message
    assert "content does not match its hash" in message
    # The guard is back on, and other streams still verify.
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=decided.pk).update(reason="again")
    assert "audit log intact" in verify_audit_output(untouched.pk)


def test_a_rewritten_event_with_a_recomputed_hash_breaks_the_next_link(resolved_case):
    """A forger who also recomputes the row's own hash is caught by the next event."""
    claimed = stream_of(resolved_case)[1]
    forged_after = {**claimed.after, "assignee": "someone_else"}
    forged_hash = _event_hash(
        stream=claimed.stream,
        sequence=claimed.sequence,
        actor_kind=claimed.actor_kind,
        actor_id=claimed.actor_id,
        actor_label=claimed.actor_label,
        action=claimed.action,
        before=claimed.before,
        after=forged_after,
        reason=claimed.reason,
        created_at=claimed.created_at,
        previous_hash=claimed.previous_hash,
    )
    with disabled_trigger("audit_event_no_update"):
        AuditEvent.objects.filter(pk=claimed.pk).update(after=forged_after, hash=forged_hash)

    problems = list(verify([resolved_case.pk]))

    assert [(p.sequence, p.problem) for p in problems] == [(3, "previous hash does not match")]
    with pytest.raises(CommandError, match=f"stream {resolved_case.pk} event 3"):
        call_command("verify_audit")


def test_a_deleted_event_leaves_a_gap_that_verify_audit_reports(resolved_case):
    claimed = stream_of(resolved_case)[1]
    with disabled_trigger("audit_event_no_delete"):
        AuditEvent.objects.filter(pk=claimed.pk).delete()

    with pytest.raises(CommandError) as broken:
        call_command("verify_audit")

    assert f"stream {resolved_case.pk} event 3: expected sequence 2" in str(broken.value)
