"""The auditor history page and its CSV export: who may read it, what each reader sees (case
streams of their queues; configuration for auditors and admins), the filters, the export
matching the page and itself on the record, and a bounded number of queries."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import Actor, record
from apps.cases.models import Case
from apps.cases.services import claim_case
from apps.routing.models import Queue

HISTORY = reverse("cases:audit_history")
EXPORT = reverse("cases:audit_export")


@pytest.fixture
def other_queue_case(file_invoice_case: Any) -> Case:
    """A case whose queue (security_review) the viewer may not see."""
    case = file_invoice_case(case_ref="secret_4711")
    Case.objects.filter(pk=case.pk).update(queue=Queue.objects.get(name="security_review"))
    return case


def _results(html: str) -> str:
    """The table of events, if any (the filter form and export link repeat the filters)."""
    _, table, rest = html.partition("<table")
    return table + rest.split("</table>", 1)[0]


def _streams(html: str, *cases: Case) -> dict[str, bool]:
    return {case.pk: case.pk in _results(html) for case in cases}


def _csv_rows(response: Any) -> list[dict[str, str]]:
    body = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(body)))


# --- who may read it -------------------------------------------------------------------------


def test_auditor_sees_case_events_of_their_queue_and_configuration_but_not_other_queues(
    viewer, file_invoice_case, other_queue_case, client_for
):
    visible = file_invoice_case()

    response = client_for(viewer).get(HISTORY)

    assert response.status_code == 200
    html = response.content.decode()
    assert _streams(html, visible, other_queue_case) == {
        visible.pk: True,
        other_queue_case.pk: False,
    }
    # api_source's key creation is a configuration change: auditors see those streams.
    assert "config:" in _results(html)
    assert f'href="{reverse("cases:detail", args=[visible.pk])}"' in html
    assert "Chain verified:" in html


def test_supervisor_sees_every_queue_they_supervise_but_no_configuration(
    supervisor, file_invoice_case, other_queue_case, client_for
):
    visible = file_invoice_case()

    html = client_for(supervisor).get(HISTORY).content.decode()

    assert _streams(html, visible, other_queue_case) == {
        visible.pk: True,
        other_queue_case.pk: True,
    }
    assert "config:" not in _results(html)


def test_admin_group_member_sees_configuration_events(reference_data, api_source, client_for):
    admin = User.objects.create_user("ada", password="pw")
    admin.groups.add(Group.objects.get(name="admin"))

    html = client_for(admin).get(HISTORY).content.decode()

    assert "config:workflows." in html


@pytest.mark.parametrize("url", [HISTORY, EXPORT])
def test_worker_is_refused_with_403_and_nothing_is_exported(worker, client_for, url):
    response = client_for(worker).get(url)

    assert response.status_code == 403
    assert not AuditEvent.objects.filter(action="audit.exported").exists()


@pytest.mark.parametrize("url", [HISTORY, EXPORT])
def test_anonymous_visitor_is_sent_to_log_in(db, client_for, url):
    response = client_for(None).get(url)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("url", [HISTORY, EXPORT])
def test_post_is_refused_with_405(viewer, client_for, url):
    assert client_for(viewer).post(url).status_code == 405


def test_nav_shows_history_to_auditors_and_supervisors_only(viewer, supervisor, worker, client_for):
    link = f'href="{HISTORY}"'
    queue = reverse("cases:queue")

    assert link in client_for(viewer).get(queue).content.decode()
    assert link in client_for(supervisor).get(queue).content.decode()
    assert link not in client_for(worker).get(queue).content.decode()


# --- filters ------------------------------------------------------------------------------


def test_case_filter_by_id_or_reference_shows_only_that_case(
    viewer, worker, file_invoice_case, client_for
):
    wanted = claim_case(case_id=file_invoice_case(case_ref="invoice_wanted").pk, actor=worker)
    other = file_invoice_case(case_ref="invoice_other")
    client = client_for(viewer)

    for text in (wanted.pk, "invoice_wanted"):
        html = client.get(HISTORY, {"stream": text}).content.decode()
        assert _streams(html, wanted, other) == {wanted.pk: True, other.pk: False}
        assert "case.claimed" in html
        assert "config:" not in _results(html)
        expected = AuditEvent.objects.filter(stream=wanted.pk).count()
        assert f"{expected} events" in html


def test_case_filter_cannot_reach_a_case_outside_the_readers_queues(
    viewer, other_queue_case, client_for
):
    html = client_for(viewer).get(HISTORY, {"stream": other_queue_case.pk}).content.decode()

    assert "0 events" in html
    assert "No events match these filters." in html
    assert _results(html) == ""


def test_action_actor_and_date_filters_narrow_the_events(
    viewer, worker, file_invoice_case, client_for
):
    claimed = claim_case(case_id=file_invoice_case().pk, actor=worker)
    file_invoice_case()
    client = client_for(viewer)

    by_action = client.get(HISTORY, {"action_type": "case.claimed"}).content.decode()
    by_actor = client.get(HISTORY, {"actor": "wendy"}).content.decode()
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    future = client.get(HISTORY, {"date_from": tomorrow}).content.decode()
    today = timezone.localdate().isoformat()
    all_today = client.get(HISTORY, {"date_from": today, "date_to": today}).content.decode()

    assert "1 event" in by_action and claimed.pk in by_action
    assert "1 event" in by_actor and "case.claimed" in by_actor
    assert "0 events" in future
    visible_count = (
        AuditEvent.objects.filter(stream__in=[*Case.objects.values_list("pk", flat=True)]).count()
        + AuditEvent.objects.filter(stream__startswith="config:").count()
    )
    assert f"{visible_count} events" in all_today


def test_an_end_date_before_the_start_is_an_error_on_the_field(viewer, client_for):
    html = (
        client_for(viewer)
        .get(HISTORY, {"date_from": "2026-09-02", "date_to": "2026-09-01"})
        .content.decode()
    )

    assert "The end date is before the start date." in html
    assert 'aria-invalid="true"' in html


def test_a_tampered_event_is_reported_as_a_broken_chain(viewer, file_invoice_case, client_for):
    case = file_invoice_case()
    event = AuditEvent.objects.filter(stream=case.pk).order_by("sequence").first()
    # Triggers refuse UPDATE; tampering means bypassing them, as an attacker with DB access would.
    with transaction.atomic(), __import__("django.db").db.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
        cursor.execute("UPDATE audit_auditevent SET reason = 'edited' WHERE id = %s", [event.pk])
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

    html = client_for(viewer).get(HISTORY, {"stream": case.pk}).content.decode()

    assert "Chain broken:" in html
    assert "content does not match its hash" in html


# --- export ---------------------------------------------------------------------------------


def test_export_streams_the_filtered_events_as_csv_and_records_the_export(
    viewer, worker, file_invoice_case, client_for
):
    case = claim_case(case_id=file_invoice_case().pk, actor=worker)
    file_invoice_case()

    response = client_for(viewer).get(EXPORT, {"stream": case.pk})

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-history-')
    rows = _csv_rows(response)
    expected = list(AuditEvent.objects.filter(stream=case.pk).order_by("-created_at", "-id"))
    assert [(r["stream"], int(r["sequence"]), r["action"], r["hash"]) for r in rows] == [
        (e.stream, e.sequence, e.action, e.hash) for e in expected
    ]
    assert list(rows[0]) == [
        "time",
        "stream",
        "sequence",
        "actor_kind",
        "actor",
        "action",
        "reason",
        "before",
        "after",
        "previous_hash",
        "hash",
    ]
    claimed = next(r for r in rows if r["action"] == "case.claimed")
    assert claimed["actor"] == "wendy"
    assert json.loads(claimed["after"]) == next(
        e.after for e in expected if e.action == "case.claimed"
    )
    exported = AuditEvent.objects.get(stream="config:audit.export")
    assert exported.action == "audit.exported"
    assert (exported.actor_kind, exported.actor_label) == ("user", "vera")
    assert exported.after == {"filters": {"stream": case.pk}}


def test_export_keeps_the_readers_scope(viewer, file_invoice_case, other_queue_case, client_for):
    visible = file_invoice_case()

    streams = {row["stream"] for row in _csv_rows(client_for(viewer).get(EXPORT))}

    assert visible.pk in streams
    assert other_queue_case.pk not in streams
    assert "config:audit.export" in streams  # the export's own event is already on record


# --- cost -------------------------------------------------------------------------------------


def test_history_page_uses_a_bounded_number_of_queries(
    viewer, worker, file_invoice_case, client_for, django_assert_max_num_queries
):
    for n in range(15):
        case = file_invoice_case(case_ref=f"bulk_{n}")
        with transaction.atomic():
            record(stream=case.pk, actor=Actor.user(worker), action="case.noted", reason="bulk")
    client = client_for(viewer)

    with django_assert_max_num_queries(12):
        response = client.get(HISTORY)

    assert response.status_code == 200
    assert "case.noted" in response.content.decode()
