"""The pull feed: engines that cannot receive webhooks list their unacknowledged events
and acknowledge them; an acknowledged decision resolves its case."""

from __future__ import annotations

import time_machine
from django.utils import timezone

from apps.cases.models import Case, OutboxEvent, State
from apps.cases.services import claim_case, request_information

from .conftest import audit_actions, client_with_key, decide, errors_of

FEED_URL = "/api/v1/decisions"


def ack_url(event_id: str) -> str:
    return f"{FEED_URL}/{event_id}/ack"


def test_feed_lists_decided_cases_events_oldest_first_as_stored(api, filed, worker):
    first, second = filed(), filed()
    start = timezone.now()
    # Decide the second case first: the feed orders by the event, not by the case.
    with time_machine.travel(start, tick=False):
        decide(second["id"], worker)
    with time_machine.travel(start + timezone.timedelta(seconds=5), tick=False):
        decide(first["id"], worker)

    response = api.get(FEED_URL)

    assert response.status_code == 200
    events = response.json()["events"]
    stored = [
        OutboxEvent.objects.get(case_id=second["id"]),
        OutboxEvent.objects.get(case_id=first["id"]),
    ]
    assert events == [
        {**event.body, "delivery": {"status": "pending", "attempts": 0}} for event in stored
    ]
    data = events[0]["data"]
    assert events[0]["type"] == "case.decided"
    assert data["case_id"] == second["id"]
    assert data["resolution"] == "select_po"
    assert data["fields"] == {"po_number": "po_781"}
    assert data["checkpoint_id"] == "cp_0193"
    assert data["actor"]["name"] == worker.get_username()


def test_feed_limit_is_honoured_and_validated(api, filed, worker):
    for _ in range(3):
        decide(filed()["id"], worker)

    two = api.get(FEED_URL, {"limit": 2})
    slash = api.get(FEED_URL + "/")
    too_many = api.get(FEED_URL, {"limit": 501})
    not_a_number = api.get(FEED_URL, {"limit": "all"})

    assert len(two.json()["events"]) == 2
    assert len(slash.json()["events"]) == 3
    assert too_many.status_code == not_a_number.status_code == 400
    assert list(errors_of(too_many)) == ["limit"]


def test_ack_resolves_the_case_and_removes_the_event_from_the_feed(api, filed, worker):
    created = filed()
    decide(created["id"], worker)
    event_id = api.get(FEED_URL).json()["events"][0]["id"]

    response = api.post(ack_url(event_id))

    assert response.status_code == 200
    assert response.json() == {"id": event_id, "status": "delivered"}
    case = Case.objects.get(pk=created["id"])
    assert case.state == State.RESOLVED
    assert case.delivery_status == "delivered"
    event = OutboxEvent.objects.get(pk=event_id)
    assert event.delivered_via == "ack"
    assert audit_actions(case.pk)[-1] == "case.resumed"
    assert api.get(FEED_URL).json()["events"] == []


def test_acking_twice_is_200_and_resumes_once(api, filed, worker):
    created = filed()
    decide(created["id"], worker)
    event_id = OutboxEvent.objects.get(case_id=created["id"]).pk

    first = api.post(ack_url(event_id))
    second = api.post(ack_url(event_id) + "/")

    assert first.status_code == second.status_code == 200
    assert second.json() == {"id": event_id, "status": "delivered"}
    assert audit_actions(created["id"]).count("case.resumed") == 1


def test_another_sources_event_is_404_and_not_listed(filed, worker, support_source):
    created = filed()
    decide(created["id"], worker)
    event_id = OutboxEvent.objects.get(case_id=created["id"]).pk
    other = client_with_key(support_source[1])

    listed = other.get(FEED_URL)
    acked = other.post(ack_url(event_id))
    missing = other.post(ack_url("evt_doesnotexist"))

    assert listed.json()["events"] == []
    assert acked.status_code == missing.status_code == 404
    assert acked.json() == missing.json()
    case = Case.objects.get(pk=created["id"])
    assert case.state == State.RESOLUTION_PENDING
    assert OutboxEvent.objects.get(pk=event_id).status == "pending"


def test_information_request_is_in_the_feed_and_its_ack_keeps_the_case_waiting(api, filed, worker):
    created = filed()  # evidence_conflict: the class tells the workflow what is missing
    claimed = claim_case(case_id=created["id"], actor=worker)
    request_information(
        case_id=claimed.pk,
        actor=worker,
        expected_version=claimed.version,
        lease_token=claimed.lease_token,
        question="Send the vendor statement for August.",
        asked_of="workflow",
    )

    events = api.get(FEED_URL).json()["events"]

    assert [event["type"] for event in events] == ["case.information_requested"]
    assert events[0]["data"]["request"]["question"] == "Send the vendor statement for August."
    assert api.post(ack_url(events[0]["id"])).status_code == 200
    assert Case.objects.get(pk=created["id"]).state == State.WAITING
    assert api.get(FEED_URL).json()["events"] == []
