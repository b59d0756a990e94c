"""Run every benchmark once, in order, and print the results table.

    .venv/bin/python bench/run_all.py            # all three, on the existing ed_bench
    .venv/bin/python bench/run_all.py --fresh    # drop and recreate ed_bench first
    .venv/bin/python bench/run_all.py --quick    # tiny counts: checks the scripts work
    .venv/bin/python bench/run_all.py --report   # only print the table of the last results

Order: decide_cases (service level), file_cases (gunicorn, API), queue_page (gunicorn,
tops the queue up to 10,000 open cases, counting the ones the filing run made). Each is a
separate process; each starts and stops its own gunicorn. Results: bench/results/*.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from common import BENCH_DATABASE_URL, PYTHON, RESULTS_DIR, ROOT

BENCH_DIR = Path(__file__).resolve().parent

FULL = {
    "decide_cases": ["--cases", "500"],
    "file_cases": ["--requests", "2000", "--concurrency", "8", "--repeat-requests", "2000"],
    "queue_page": ["--open-cases", "10000", "--requests", "200"],
}
QUICK = {
    "decide_cases": ["--cases", "20"],
    "file_cases": ["--requests", "80", "--concurrency", "8", "--repeat-requests", "80"],
    "queue_page": ["--open-cases", "500", "--requests", "20"],
}


def recreate_database() -> None:
    """Drop and create the benchmark database (its name comes from BENCH_DATABASE_URL)."""
    name = BENCH_DATABASE_URL.rsplit("/", 1)[-1]
    server = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *server, "--if-exists", name], check=True)  # noqa: S603, S607
    subprocess.run(["createdb", *server, name], check=True)  # noqa: S603, S607


def run(name: str, arguments: list[str]) -> None:
    print(f"== {name} {' '.join(arguments)}", flush=True)
    subprocess.run(  # noqa: S603 (our own interpreter and script)
        [PYTHON, str(BENCH_DIR / f"{name}.py"), *arguments],
        cwd=ROOT,
        env=os.environ.copy(),
        check=True,
    )


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def table() -> str:
    rows = ["| benchmark | measure | p50 ms | p95 ms | p99 ms | rate | target | verdict |"]
    rows.append("|---|---|---:|---:|---:|---:|---|---|")
    filed = load("file_cases")
    if filed:
        unique, repeat = filed["unique"], filed["repeat"]
        lat = unique["latency"]
        rows.append(
            f"| file (API, unique packets) | {unique['requests']} POST, c={unique['concurrency']}"
            f" | {lat['p50_ms']} | {lat['p95_ms']} | {lat['p99_ms']}"
            f" | {unique['cases_per_second']} cases/s | p95 < 250 ms, ≥ 50 cases/s"
            f" | {filed['verdict']['unique_p95']}, {filed['verdict']['unique_throughput']} |"
        )
        lat = repeat["latency"]
        rows.append(
            f"| file (API, same packet, hey) | {repeat['requests']} POST, "
            f"c={repeat['concurrency']} | {lat['p50_ms']} | {lat['p95_ms']} | {lat['p99_ms']}"
            f" | {repeat['requests_per_second']:.1f} req/s | (none) | all "
            f"{'200' if set(repeat['status_codes']) == {'200'} else repeat['status_codes']} |"
        )
    decided = load("decide_cases")
    if decided:
        rate = decided["claim_and_decide_per_second_sequential"]
        for measure in ("claim", "decide", "claim_plus_decide"):
            lat = decided[measure]
            is_decide = measure == "decide"
            rows.append(
                f"| decision path (services) | {measure}, {lat['count']} cases"
                f" | {lat['p50_ms']} | {lat['p95_ms']} | {lat['p99_ms']}"
                f" | {f'{rate} cases/s, one at a time' if measure == 'claim_plus_decide' else ''}"
                f" | {'p95 < 50 ms' if is_decide else ''}"
                f" | {decided['verdict']['decide_p95'] if is_decide else ''} |"
            )
    queue = load("queue_page")
    if queue:
        for key, label in (("sequential", "sequential"), ("concurrency_4", "concurrency 4")):
            run_result = queue[key]
            lat = run_result["latency"]
            rows.append(
                f"| queue page GET / ({queue['setup']['open_after']} open) | "
                f"{run_result['requests']} GET, {label} | {lat['p50_ms']} | {lat['p95_ms']}"
                f" | {lat['p99_ms']} | {run_result['pages_per_second']} pages/s"
                f" | p95 < 300 ms | {queue['verdict'][key + '_p95']} |"
            )
    if filed:
        memory = filed["unique"]["memory"]
        rows.append("")
        rows.append(
            f"Peak RSS of the {memory['workers']} gunicorn workers during the unique-packet run:"
            f" {memory['peak_total_mib']} MiB together (per worker "
            f"{', '.join(str(m) for m in memory['peak_per_worker_mib'])} MiB; "
            f"{memory['baseline_total_mib']} MiB before the timed run)."
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", action="store_true", help="drop and recreate ed_bench")
    parser.add_argument("--quick", action="store_true", help="tiny counts, a smoke check")
    parser.add_argument("--report", action="store_true", help="only print the last results")
    args = parser.parse_args()

    if not args.report:
        if args.fresh:
            recreate_database()
        plan = QUICK if args.quick else FULL
        for name, arguments in plan.items():
            run(name, arguments)
    print(table())


if __name__ == "__main__":
    sys.exit(main())
