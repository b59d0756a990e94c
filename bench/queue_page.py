"""Benchmark 3: the worker's queue page (GET /) with 10,000 open cases, served by gunicorn.

    .venv/bin/python bench/queue_page.py [--open-cases 10000] [--requests 200]

Setup (not timed): tops the accounts_payable queue up to --open-cases open cases. 200
template cases are filed through apps.cases.services.file_case (four exception classes,
five amounts, so the priority bands differ); the rest are copies of them made with
bulk_create (Case + EvidenceItem, new ids, dedupe keys and refs, staggered created_at and
due_at). The copies have no audit events: the queue page does not read the audit log.
The two tables are ANALYZEd afterwards, as autovacuum would have done on a real desk.

Then the benchmark worker (view_queue + work_queue on accounts_payable) logs in through the
real login form with a cookie jar, and GET / (the default view: active cases, priority
order, first page of 25) is timed --requests times sequentially, then --requests times at
concurrency 4 (one client per thread, same session).

Writes bench/results/queue_page.json. Target: p95 < 300 ms.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
from common import (
    QUEUE_NAME,
    SOURCE_NAME,
    WORKER_PASSWORD,
    WORKER_USERNAME,
    Gunicorn,
    create_api_key,
    ensure_worker,
    gunicorn,
    invoice_packet,
    latency_summary,
    prepare_database,
    run_id,
    setup_django,
    verdict,
    write_result,
)

TARGET_P95_MS = 300.0
TEMPLATE_CASES = 200
WARMUP_REQUESTS = 8
CLASSES = ["evidence_conflict", "evidence_required", "output_rejected", "policy_denied"]
AMOUNTS = ["45.00", "900.00", "12400.00", "85000.00", "250000.00"]
BATCH = 1000


def open_cases_in_queue() -> int:
    from apps.cases.models import Case, State

    return Case.objects.filter(queue__name=QUEUE_NAME, state=State.OPEN).count()


def file_templates(source: Any, run: str, count: int) -> list[str]:
    from django.utils.dateparse import parse_datetime

    from apps.cases.services import file_case

    ids = []
    for number in range(count):
        amount = AMOUNTS[number % len(AMOUNTS)]
        packet = invoice_packet(
            run,
            number,
            **{
                "class": CLASSES[number % len(CLASSES)],
                "reason_code": f"bench_reason_{number % 7}",
                "attributes": {
                    "tenant": "acme-eu",
                    "region": "eu",
                    "amount": amount,
                    "currency": "EUR",
                    "initiated_by": "ap-bot",
                },
            },
        )
        for item in packet["evidence"]:
            item["source_timestamp"] = parse_datetime(item["source_timestamp"])
        case, _ = file_case(source=source, packet=packet)
        ids.append(case.pk)
    return ids


def copy_cases(template_ids: list[str], run: str, count: int) -> None:
    """Bulk copies of the template cases: the same packet shape and routing, new identity."""
    from django.db import transaction

    from apps.cases.models import Case, EvidenceItem, new_case_id

    templates = list(Case.objects.filter(pk__in=template_ids).order_by("pk"))
    evidence: dict[str, list[EvidenceItem]] = {}
    for item in EvidenceItem.objects.filter(case_id__in=template_ids):
        evidence.setdefault(item.case_id, []).append(item)

    made = 0
    while made < count:
        cases, items = [], []
        for number in range(made, min(count, made + BATCH)):
            template = templates[number % len(templates)]
            # Spread the copies over the last weeks so age and due sorting have work to do.
            shift = timedelta(minutes=number % 40_000)
            copy = Case(
                **{
                    f.attname: getattr(template, f.attname)
                    for f in Case._meta.concrete_fields
                    if f.attname not in {"id", "updated_at"}
                }
            )
            copy.id = new_case_id()
            copy.dedupe_key = f"bench-copy|{run}|{number}"
            copy.workflow_instance_id = f"wf_bench_copy_{run}_{number}"
            copy.case_ref = f"invoice_copy_{run}_{number}"
            copy.created_at = template.created_at - shift
            copy.due_at = template.due_at - shift
            copy.original_due_at = template.original_due_at - shift
            cases.append(copy)
            for item in evidence.get(template.pk, []):
                items.append(
                    EvidenceItem(
                        case_id=copy.id,
                        **{
                            f.attname: getattr(item, f.attname)
                            for f in EvidenceItem._meta.concrete_fields
                            if f.attname not in {"id", "case_id"}
                        },
                    )
                )
        with transaction.atomic():
            Case.objects.bulk_create(cases)
            EvidenceItem.objects.bulk_create(items)
        made += len(cases)


def ensure_open_cases(target: int) -> dict[str, Any]:
    from apps.workflows.models import ApiSource

    before = open_cases_in_queue()
    started = time.perf_counter()
    filed = copied = 0
    if before < target:
        run = run_id()
        source = ApiSource.objects.get(name=SOURCE_NAME)
        filed = min(TEMPLATE_CASES, target - before)
        template_ids = file_templates(source, run, filed)
        copied = target - before - filed
        if copied:
            copy_cases(template_ids, run, copied)
    # A bulk insert leaves the planner's statistics saying the table is nearly empty until
    # autovacuum gets to it (up to a minute later); a desk that grew to this size over days
    # has current statistics, so the benchmark measures with them.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE cases_case, cases_evidenceitem")
    return {
        "open_before": before,
        "filed_through_service": filed,
        "bulk_copied": copied,
        "open_after": open_cases_in_queue(),
        "setup_seconds": round(time.perf_counter() - started, 1),
    }


CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def log_in(server: Gunicorn) -> httpx.Cookies:
    """Log in through the login form, as a browser would; returns the session cookies."""
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        form = client.get("/accounts/login/")
        token = CSRF_FIELD.search(form.text)
        if form.status_code != 200 or token is None:
            raise RuntimeError(f"login page answered {form.status_code}")
        response = client.post(
            "/accounts/login/",
            data={
                "username": WORKER_USERNAME,
                "password": WORKER_PASSWORD,
                "csrfmiddlewaretoken": token.group(1),
                "next": "/",
            },
        )
        if response.status_code != 302 or "sessionid" not in client.cookies:
            raise RuntimeError(f"login failed: {response.status_code}")
        return httpx.Cookies(client.cookies)


def timed_gets(
    server: Gunicorn, cookies: httpx.Cookies, *, requests: int, concurrency: int
) -> dict[str, Any]:
    local = threading.local()
    clients: list[httpx.Client] = []
    lock = threading.Lock()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=server.base_url, cookies=cookies, timeout=30)
            with lock:
                clients.append(local.client)
        return local.client

    def get(_: int) -> tuple[int, float, int]:
        started = time.perf_counter()
        response = client().get("/")
        return response.status_code, time.perf_counter() - started, len(response.content)

    try:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(get, range(WARMUP_REQUESTS)))
            started = time.perf_counter()
            results = list(pool.map(get, range(requests)))
            wall = time.perf_counter() - started
    finally:
        for each in clients:
            each.close()
    statuses: dict[str, int] = {}
    for status, _, _ in results:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    return {
        "requests": requests,
        "concurrency": concurrency,
        "warmup_requests": WARMUP_REQUESTS,
        "wall_seconds": round(wall, 2),
        "pages_per_second": round(requests / wall, 1),
        "status_codes": statuses,
        "response_bytes": results[0][2],
        "latency": latency_summary([seconds for _, seconds, _ in results]),
    }


def page_facts(worker: Any) -> dict[str, Any]:
    """One in-process render: its SQL statement count and that it lists the queue's cases."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(worker)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/")
    slowest = sorted(queries.captured_queries, key=lambda q: float(q["time"]), reverse=True)
    return {
        "status": response.status_code,
        "queries": len(queries),
        "rows_shown": response.content.decode().count('href="/cases/exc_'),
        "slowest_queries_ms": [round(float(q["time"]) * 1000, 1) for q in slowest[:3]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--open-cases", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()

    prepare_database()
    create_api_key()  # the bench source that files the template cases
    setup_django()
    worker = ensure_worker()
    setup = ensure_open_cases(args.open_cases)
    facts = page_facts(worker)

    with gunicorn() as server:
        cookies = log_in(server)
        sequential = timed_gets(server, cookies, requests=args.requests, concurrency=1)
        concurrent = timed_gets(server, cookies, requests=args.requests, concurrency=4)

    result = {
        "setup": setup,
        "page": facts,
        "sequential": sequential,
        "concurrency_4": concurrent,
        "targets": {"p95_ms": TARGET_P95_MS},
        "verdict": {
            "sequential_p95": verdict(sequential["latency"]["p95_ms"], TARGET_P95_MS),
            "concurrency_4_p95": verdict(concurrent["latency"]["p95_ms"], TARGET_P95_MS),
        },
    }
    path = write_result("queue_page", result)
    print(json.dumps(result, indent=2))
    print(f"written to {path}")
    if {**sequential["status_codes"], **concurrent["status_codes"]}.keys() != {"200"}:
        raise SystemExit("some queue pages did not answer 200")


if __name__ == "__main__":
    main()
