"""Identical POSTs racing each other make exactly one case (a unique constraint, not a
read-then-write). Real threads, real PostgreSQL transactions."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from apps.audit.models import AuditEvent
from apps.cases.models import Case, EvidenceItem
from tests.conftest import invoice_packet

THREADS = 8


@pytest.mark.threaded
@pytest.mark.django_db(transaction=True)
def test_identical_packets_racing_make_one_case(api_source):
    packet = invoice_packet()
    key = api_source[1]
    barrier = threading.Barrier(THREADS, timeout=30)
    results: list[tuple[int, dict]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def file_once() -> None:
        try:
            client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
            barrier.wait()
            response = client.post("/api/v1/cases", packet, content_type="application/json")
            with lock:
                results.append((response.status_code, response.json()))
        except BaseException as error:  # surfaced to the test below, never swallowed
            with lock:
                failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=file_once) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * (THREADS - 1) + [201], results
    assert len({body["id"] for _, body in results}) == 1
    case = Case.objects.get()
    assert case.pk == results[0][1]["id"]
    assert EvidenceItem.objects.filter(case=case).count() == 2
    assert AuditEvent.objects.filter(stream=case.pk, action="case.filed").count() == 1
