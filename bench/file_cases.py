"""Benchmark 1: filing cases through POST /api/v1/cases, served by gunicorn on PostgreSQL.

    .venv/bin/python bench/file_cases.py [--requests 2000] [--concurrency 8]

Run A (unique packets): every request is a new packet (distinct workflow_instance_id), sent
by a thread pool of httpx clients (keep-alive, one per thread) in a closed loop at the given
concurrency; throughput and p50/p95/p99 latency as the client sees them. The RSS of the
gunicorn workers is sampled every 250 ms during this run.

Run B (idempotent repeat): one packet is filed, then `hey` sends that same body again and
again: every answer must be 200 with the first case (a dedupe hit), never a new case.

Writes bench/results/file_cases.json and prints a summary. Targets: p95 < 250 ms and at
least 50 cases/s for run A.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from common import (
    Gunicorn,
    RssSampler,
    create_api_key,
    gunicorn,
    invoice_packet,
    latency_summary,
    prepare_database,
    run_id,
    setup_django,
    verdict,
    write_result,
)

TARGET_P95_MS = 250.0
TARGET_CASES_PER_SECOND = 50.0
WARMUP_REQUESTS = 16  # two per thread: opens the connections, warms imports; not counted


def run_unique(
    server: Gunicorn, key: str, run: str, *, requests: int, concurrency: int
) -> dict[str, Any]:
    local = threading.local()
    clients: list[httpx.Client] = []
    clients_lock = threading.Lock()
    url = f"{server.base_url}/api/v1/cases"
    headers = {"Authorization": f"Bearer {key}"}

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(headers=headers, timeout=30)
            with clients_lock:
                clients.append(local.client)
        return local.client

    def post(number: int) -> tuple[int, float]:
        body = json.dumps(invoice_packet(run, number)).encode()
        started = time.perf_counter()
        response = client().post(url, content=body, headers={"Content-Type": "application/json"})
        return response.status_code, time.perf_counter() - started

    try:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(post, range(-WARMUP_REQUESTS, 0)))
            with RssSampler(server) as memory:
                started = time.perf_counter()
                results = list(pool.map(post, range(1, requests + 1)))
                wall = time.perf_counter() - started
    finally:
        for each in clients:
            each.close()

    statuses = Counter(status for status, _ in results)
    created = statuses.get(201, 0)
    return {
        "requests": requests,
        "concurrency": concurrency,
        "warmup_requests": WARMUP_REQUESTS,
        "wall_seconds": round(wall, 2),
        "status_codes": {str(code): n for code, n in sorted(statuses.items())},
        "cases_per_second": round(created / wall, 1),
        "latency": latency_summary([seconds for _, seconds in results]),
        "memory": memory.summary(),
    }


def parse_hey(output: str) -> dict[str, Any]:
    def seconds_after(label: str) -> float:
        match = re.search(rf"{re.escape(label)}\s+([\d.]+) secs", output)
        return float(match.group(1)) if match else float("nan")

    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    percentiles = {
        int(p): float(s) * 1000 for p, s in re.findall(r"(\d+)%+ in ([\d.]+) secs", output)
    }
    statuses = {code: int(n) for code, n in re.findall(r"\[(\d+)\]\s+(\d+) responses", output)}
    return {
        "requests_per_second": float(rps.group(1)) if rps else float("nan"),
        "wall_seconds": seconds_after("Total:"),
        "latency": {
            "p50_ms": round(percentiles.get(50, float("nan")), 2),
            "p95_ms": round(percentiles.get(95, float("nan")), 2),
            "p99_ms": round(percentiles.get(99, float("nan")), 2),
            "mean_ms": round(seconds_after("Average:") * 1000, 2),
            "max_ms": round(seconds_after("Slowest:") * 1000, 2),
        },
        "status_codes": statuses,
    }


def run_repeat(
    server: Gunicorn, key: str, run: str, *, requests: int, concurrency: int
) -> dict[str, Any]:
    hey = shutil.which("hey")
    if hey is None:
        raise SystemExit("`hey` is not installed: apt-get install -y hey")
    packet = invoice_packet(run, 0)
    url = f"{server.base_url}/api/v1/cases"
    first = httpx.post(url, json=packet, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    if first.status_code != 201:
        raise RuntimeError(f"filing the repeat packet answered {first.status_code}: {first.text}")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as body:
        json.dump(packet, body)
        body.flush()
        with RssSampler(server) as memory:
            completed = subprocess.run(  # noqa: S603 (hey from PATH, our own args)
                [
                    hey,
                    "-n",
                    str(requests),
                    "-c",
                    str(concurrency),
                    "-m",
                    "POST",
                    "-T",
                    "application/json",
                    "-H",
                    f"Authorization: Bearer {key}",
                    "-D",
                    body.name,
                    url,
                ],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
    result = parse_hey(completed.stdout)
    result.update(
        requests=requests,
        concurrency=concurrency,
        case_id=first.json()["id"],
        memory=memory.summary(),
    )
    return result


def count_cases(run: str) -> int:
    """Rows the runs left behind: the unique run's cases plus the one repeated packet."""
    setup_django()
    from apps.cases.models import Case

    return Case.objects.filter(workflow_instance_id__startswith=f"wf_bench_{run}_").count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat-requests", type=int, default=2000)
    args = parser.parse_args()

    prepare_database()
    key = create_api_key()
    run = run_id()
    with gunicorn() as server:
        unique = run_unique(server, key, run, requests=args.requests, concurrency=args.concurrency)
        repeat = run_repeat(
            server, key, run, requests=args.repeat_requests, concurrency=args.concurrency
        )
    rows = count_cases(run)
    expected_rows = WARMUP_REQUESTS + args.requests + 1
    result = {
        "server": {"workers": server.workers, "threads": server.threads},
        "unique": unique,
        "repeat": repeat,
        "rows_created": rows,
        "rows_expected": expected_rows,
        "targets": {
            "unique_p95_ms": TARGET_P95_MS,
            "unique_cases_per_second": TARGET_CASES_PER_SECOND,
        },
        "verdict": {
            "unique_p95": verdict(unique["latency"]["p95_ms"], TARGET_P95_MS),
            "unique_throughput": verdict(
                unique["cases_per_second"], TARGET_CASES_PER_SECOND, higher_is_better=True
            ),
        },
    }
    path = write_result("file_cases", result)
    print(json.dumps(result, indent=2))
    print(f"written to {path}")
    if rows != expected_rows:
        raise SystemExit(f"expected {expected_rows} cases of this run, found {rows}")
    if set(unique["status_codes"]) != {"201"} or set(repeat["status_codes"]) != {"200"}:
        raise SystemExit("unexpected status codes; see the result above")


if __name__ == "__main__":
    main()
