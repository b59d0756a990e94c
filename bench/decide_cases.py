"""Benchmark 2: the decision path at the service level, on PostgreSQL.

    .venv/bin/python bench/decide_cases.py [--cases 500]

Files the cases through apps.cases.services.file_case (not timed), then for each one, in a
loop: claim_case, then decide_case (select_po) as the benchmark worker. Each call is timed
on its own and the pair together. The decision's relay is enqueued to Redis after commit
(inside the timed call, as in production); no Celery worker runs, and the queued relay
messages are removed from the benchmark's Redis database afterwards.

Writes bench/results/decide_cases.json. Target: decide_case p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from typing import Any

from common import (
    BENCH_REDIS_URL,
    SOURCE_NAME,
    create_api_key,
    ensure_worker,
    invoice_packet,
    latency_summary,
    prepare_database,
    run_id,
    setup_django,
    verdict,
    write_result,
)

TARGET_DECIDE_P95_MS = 50.0
WARMUP_CASES = 10  # first calls pay for lazy imports and the connection; not counted


def file_cases(source: Any, run: str, count: int) -> list[str]:
    from django.utils.dateparse import parse_datetime

    from apps.cases.services import file_case

    ids = []
    for number in range(count):
        packet = invoice_packet(run, number)
        for item in packet["evidence"]:
            item["source_timestamp"] = parse_datetime(item["source_timestamp"])
        case, created = file_case(source=source, packet=packet)
        assert created, "a benchmark packet collided with an earlier one"  # noqa: S101
        ids.append(case.pk)
    return ids


def claim_and_decide(case_id: str, worker: Any) -> tuple[float, float]:
    from apps.cases.services import claim_case, decide_case

    started = time.perf_counter()
    case = claim_case(case_id=case_id, actor=worker)
    claimed = time.perf_counter()
    result = decide_case(
        case_id=case.pk,
        actor=worker,
        expected_version=case.version,
        lease_token=case.lease_token,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="",
        resolution_id=str(uuid.uuid4()),
        evidence_digest=case.evidence_digest,
    )
    decided = time.perf_counter()
    if result.replayed:
        raise RuntimeError(f"{case_id}: a fresh resolution id was treated as a replay")
    return claimed - started, decided - claimed


def queries_of_one(case_id: str, worker: Any) -> dict[str, int]:
    """How many SQL statements one claim and one decision run (outside the timed loop)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.cases.services import claim_case, decide_case

    with CaptureQueriesContext(connection) as claim_queries:
        case = claim_case(case_id=case_id, actor=worker)
    with CaptureQueriesContext(connection) as decide_queries:
        decide_case(
            case_id=case.pk,
            actor=worker,
            expected_version=case.version,
            lease_token=case.lease_token,
            resolution="select_po",
            fields={"po_number": "po_781"},
            note="",
            resolution_id=str(uuid.uuid4()),
            evidence_digest=case.evidence_digest,
        )
    return {"claim": len(claim_queries), "decide": len(decide_queries)}


def drop_queued_relays() -> int:
    """No Celery worker listens on the benchmark's Redis database: remove what piled up."""
    import redis

    client = redis.Redis.from_url(BENCH_REDIS_URL)
    queued = int(client.llen("celery"))
    client.delete("celery")
    return queued


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=500)
    args = parser.parse_args()

    prepare_database()
    create_api_key()  # makes sure the bench source exists, with its workflow types
    setup_django()
    from apps.cases.models import Case, Decision, OutboxEvent, State
    from apps.workflows.models import ApiSource

    source = ApiSource.objects.get(name=SOURCE_NAME)
    worker = ensure_worker()
    run = run_id()
    started = time.perf_counter()
    ids = file_cases(source, run, WARMUP_CASES + args.cases + 1)
    filing_seconds = time.perf_counter() - started
    warmup, timed, counted = ids[:WARMUP_CASES], ids[WARMUP_CASES:-1], ids[-1]

    for case_id in warmup:
        claim_and_decide(case_id, worker)
    claims, decisions, totals = [], [], []
    loop_started = time.perf_counter()
    for case_id in timed:
        claim_seconds, decide_seconds = claim_and_decide(case_id, worker)
        claims.append(claim_seconds)
        decisions.append(decide_seconds)
        totals.append(claim_seconds + decide_seconds)
    loop_seconds = time.perf_counter() - loop_started
    queries = queries_of_one(counted, worker)

    decided = Case.objects.filter(pk__in=ids, state=State.RESOLUTION_PENDING).count()
    decision_rows = Decision.objects.filter(case_id__in=ids).count()
    events = OutboxEvent.objects.filter(case_id__in=ids, type="case.decided").count()
    relays = drop_queued_relays()

    decide_latency = latency_summary(decisions)
    result = {
        "cases": args.cases,
        "warmup_cases": WARMUP_CASES,
        "filing_seconds_untimed_setup": round(filing_seconds, 2),
        "loop_seconds": round(loop_seconds, 2),
        "claim_and_decide_per_second_sequential": round(args.cases / loop_seconds, 1),
        "claim": latency_summary(claims),
        "decide": decide_latency,
        "claim_plus_decide": latency_summary(totals),
        "queries_per_call": queries,
        "checks": {
            "cases_resolution_pending": decided,
            "decision_rows": decision_rows,
            "decided_events": events,
            "relay_messages_dropped": relays,
        },
        "targets": {"decide_p95_ms": TARGET_DECIDE_P95_MS},
        "verdict": {"decide_p95": verdict(decide_latency["p95_ms"], TARGET_DECIDE_P95_MS)},
    }
    path = write_result("decide_cases", result)
    print(json.dumps(result, indent=2))
    print(f"written to {path}")
    if not decided == decision_rows == events == len(ids):
        raise SystemExit("not every case ended decided with one decision and one event")


if __name__ == "__main__":
    main()
