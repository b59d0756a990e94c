"""The client during a desk outage, against a real local HTTP server that answers a
script: retries resend the very same packet (one dedupe key), back off exponentially with
jitter, and give up with DeskUnavailable, never with a case the desk did not confirm."""

from __future__ import annotations

import socket

import pytest

from exception_desk_client import Desk, DeskError, DeskUnavailable, InvalidRequest
from tests.conftest import invoice_packet

from .scripted_server import Answer, case_body, scripted_server

UNAVAILABLE = Answer(503, {"errors": {"detail": ["Service unavailable."]}})


class Sleeps(list[float]):
    """Stands in for time.sleep: records each back-off instead of waiting it out."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def desk_at(url: str, sleeps: Sleeps, *, retries: int) -> Desk:
    return Desk(url, "edk_test_key", retries=retries, backoff=0.1, max_backoff=10, sleep=sleeps)


def test_file_case_survives_two_503s_with_the_same_packet_and_dedupe_key_each_attempt():
    packet = invoice_packet(dedupe_key="langgraph:thread-1:cp-1")
    sleeps = Sleeps()
    with scripted_server(UNAVAILABLE, UNAVAILABLE, Answer(201, case_body("exc_1"))) as server:
        case = desk_at(server.url, sleeps, retries=3).file_case(packet)

    assert (case.id, case.created) == ("exc_1", True)
    assert [request.path for request in server.requests] == ["/api/v1/cases"] * 3
    bodies = {request.body for request in server.requests}
    assert len(bodies) == 1, "every attempt must carry identical bytes"
    assert server.requests[0].json()["dedupe_key"] == "langgraph:thread-1:cp-1"
    assert server.requests[0].headers["authorization"] == "Bearer edk_test_key"
    # Exponential with jitter: attempt n waits between half and all of 0.1 * 2**(n-1).
    assert len(sleeps) == 2
    assert 0.05 <= sleeps[0] <= 0.1 and 0.1 <= sleeps[1] <= 0.2


def test_file_case_raises_desk_unavailable_after_the_budget_so_the_task_cannot_advance():
    sleeps = Sleeps()
    with scripted_server(UNAVAILABLE) as server:
        desk = desk_at(server.url, sleeps, retries=2)
        with pytest.raises(DeskUnavailable) as raised:
            desk.file_case(invoice_packet())

    assert raised.value.attempts == 3 and raised.value.status == 503
    assert raised.value.errors == {"detail": ["Service unavailable."]}
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_an_unreachable_desk_is_retried_then_reported_unavailable():
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    desk = desk_at(f"http://127.0.0.1:{port}", sleeps, retries=2)

    with pytest.raises(DeskUnavailable) as raised:
        desk.get_case("exc_1")

    assert raised.value.attempts == 3 and raised.value.status is None
    assert len(sleeps) == 2


def test_a_retry_after_answer_lengthens_the_wait():
    sleeps = Sleeps()
    busy = Answer(503, {"errors": {"detail": ["busy"]}}, headers={"Retry-After": "3"})
    with scripted_server(busy, Answer(200, case_body("exc_2"))) as server:
        case = desk_at(server.url, sleeps, retries=1).get_case("exc_2")

    assert case.id == "exc_2" and sleeps == [3.0]


def test_a_refused_packet_is_not_retried_and_carries_the_desks_errors():
    errors = {"evidence.0.source_timestamp": ["Give the timezone."]}
    sleeps = Sleeps()
    with (
        scripted_server(Answer(400, {"errors": errors})) as server,
        pytest.raises(InvalidRequest) as raised,
    ):
        desk_at(server.url, sleeps, retries=3).file_case(invoice_packet())

    assert raised.value.status == 400 and raised.value.errors == errors
    assert len(server.requests) == 1 and sleeps == []


def test_appending_evidence_is_resent_after_a_503_but_never_after_a_500():
    """A 503 means the desk did not take the request; after a 500 it may have added the
    version, and appending is not idempotent."""
    item = invoice_packet()["evidence"][0]
    sleeps = Sleeps()
    with scripted_server(UNAVAILABLE, Answer(200, case_body(evidence_version=2))) as server:
        case = desk_at(server.url, sleeps, retries=3).append_evidence("exc_1", [item])
    assert case.evidence_version == 2 and len(server.requests) == 2

    broken = Answer(500, {"errors": {"detail": ["boom"]}})
    with scripted_server(broken) as server, pytest.raises(DeskError) as raised:
        desk_at(server.url, Sleeps(), retries=3).append_evidence("exc_1", [item])
    assert raised.value.status == 500 and len(server.requests) == 1
