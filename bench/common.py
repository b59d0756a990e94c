"""Shared pieces of the benchmarks: the environment, seeding, gunicorn, statistics, results.

Every benchmark talks only to 127.0.0.1, runs a bounded number of requests or calls, and
starts and stops its own gunicorn. The database is ``ed_bench`` and the Redis database 10
unless BENCH_DATABASE_URL / BENCH_REDIS_URL say otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
LOG_DIR = ROOT / "var" / "bench"  # gunicorn logs; var/ is not committed
PYTHON = str(ROOT / ".venv" / "bin" / "python")
GUNICORN = str(ROOT / ".venv" / "bin" / "gunicorn")
HOST = "127.0.0.1"

BENCH_DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ed_bench"
)
BENCH_REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10")

# The server runs as a production-like process would: DEBUG off (no SQL logging, no debug
# pages), the local settings module only for its defaults.
BENCH_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.local",
    "DEBUG": "false",
    "SECRET_KEY": "bench",
    "DATABASE_URL": BENCH_DATABASE_URL,
    "REDIS_URL": BENCH_REDIS_URL,
}

SOURCE_NAME = "bench"
WORKFLOW_TYPES = "invoice_match,refund_approval"
WORKER_USERNAME = "bench_worker"
WORKER_PASSWORD = "bench-worker-password-not-secret"  # noqa: S105 (a local benchmark user)
QUEUE_NAME = "accounts_payable"


def configure_environment() -> None:
    """Point this process at the benchmark database before Django is imported."""
    for name, value in BENCH_ENV.items():
        os.environ[name] = value
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def setup_django() -> None:
    configure_environment()
    import logging

    import django

    django.setup()
    # The settings log INFO to the console; the client library's line per request would
    # drown the results.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def run_manage(*args: str) -> str:
    """Run manage.py with the benchmark environment; return its stdout."""
    completed = subprocess.run(  # noqa: S603 (fixed interpreter and script, our own args)
        [PYTHON, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env={**os.environ, **BENCH_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{completed.stderr}")
    return completed.stdout


def prepare_database() -> None:
    """Migrate, then seed the reference data and the workflow types (idempotent).

    Same shape as tests/conftest.py's reference_data fixture, run in a child process so the
    caller's Django (if any) is untouched.
    """
    run_manage("migrate", "--noinput", "-v0")
    seed = (
        "import sys; sys.path.insert(0, 'bench');"
        "from common import setup_django; setup_django();"
        "from common import seed_reference_data; seed_reference_data()"
    )
    completed = subprocess.run(  # noqa: S603 (fixed interpreter, our own code)
        [PYTHON, "-c", seed],
        cwd=ROOT,
        env={**os.environ, **BENCH_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"seeding failed:\n{completed.stderr}")


def seed_reference_data() -> None:
    """Reference queues/classes/rules plus the workflow types the packets use."""
    from apps.routing.reference import ensure_reference_data
    from apps.workflows.models import WorkflowType

    ensure_reference_data()
    for name, display, versions in [
        ("invoice_match", "Invoice matching", ["16", "17"]),
        ("refund_approval", "Refund approval", ["3"]),
        ("support_account_change", "Support account change", ["1"]),
    ]:
        WorkflowType.objects.get_or_create(
            name=name, defaults={"display_name": display, "supported_versions": versions}
        )


def create_api_key() -> str:
    """A fresh key for the bench source, through the real management command."""
    output = run_manage(
        "create_api_key", "--source", SOURCE_NAME, "--workflow-types", WORKFLOW_TYPES
    )
    return output.strip().splitlines()[-1].strip()


def ensure_worker() -> Any:
    """The benchmark worker: worker group, view+work on accounts_payable. Needs Django."""
    from django.contrib.auth.models import Group, User
    from guardian.shortcuts import assign_perm

    from apps.routing.models import Queue, WorkerProfile

    user, created = User.objects.get_or_create(username=WORKER_USERNAME)
    if created or not user.check_password(WORKER_PASSWORD):
        user.set_password(WORKER_PASSWORD)
        user.save()
    user.groups.add(Group.objects.get(name="worker"))
    WorkerProfile.objects.get_or_create(user=user, defaults={"clearance": "internal"})
    queue = Queue.objects.get(name=QUEUE_NAME)
    for perm in ("view_queue", "work_queue"):
        assign_perm(f"routing.{perm}", user, queue)
    return user


_packet_counter = itertools.count(1)


def invoice_packet(run_id: str, number: int | None = None, **overrides: Any) -> dict[str, Any]:
    """The tests' invoice conflict packet (tests/conftest.py), unique per (run_id, number)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.packets import invoice_packet as sample_packet

    n = next(_packet_counter) if number is None else number
    unique = {"workflow_instance_id": f"wf_bench_{run_id}_{n}", "case_ref": f"invoice_{run_id}_{n}"}
    return sample_packet(**{**unique, **overrides})


def run_id() -> str:
    """Distinguishes the packets of one run from the previous runs' (dedupe keys)."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S")


# --- statistics -------------------------------------------------------------------------


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation): the value pct% of samples are at or under."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-pct * len(ordered) // 100))))
    return ordered[rank - 1]


def latency_summary(seconds: list[float]) -> dict[str, float]:
    """p50/p95/p99/mean/max in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "count": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2) if ms else float("nan"),
        "max_ms": round(max(ms), 2) if ms else float("nan"),
    }


# --- gunicorn ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def child_pids(parent: int) -> list[int]:
    completed = subprocess.run(  # noqa: S603 (fixed command)
        ["/bin/ps", "-o", "pid=", "--ppid", str(parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    return [int(pid) for pid in completed.stdout.split()]


def rss_kib(pids: list[int]) -> dict[int, int]:
    if not pids:
        return {}
    completed = subprocess.run(  # noqa: S603 (fixed command)
        ["/bin/ps", "-o", "pid=,rss=", "-p", ",".join(str(p) for p in pids)],
        capture_output=True,
        text=True,
        check=False,
    )
    sizes = {}
    for line in completed.stdout.splitlines():
        pid, rss = line.split()
        sizes[int(pid)] = int(rss)
    return sizes


@dataclass
class Gunicorn:
    """A gunicorn serving config.wsgi on 127.0.0.1 with the benchmark environment."""

    workers: int = 2
    threads: int = 4
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    log_path: Path = field(default_factory=lambda: LOG_DIR / "gunicorn.log")

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        command = [
            GUNICORN,
            "config.wsgi",
            "-w",
            str(self.workers),
            "--threads",
            str(self.threads),
            "-b",
            f"{HOST}:{self.port}",
        ]
        self.process = subprocess.Popen(  # noqa: S603 (fixed binary, our own args)
            command,
            cwd=ROOT,
            env={**os.environ, **BENCH_ENV},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited; see {self.log_path}")
            with contextlib.suppress(httpx.HTTPError):
                # Unauthenticated: 401 from the API proves Django answered. Both workers
                # must have been forked too; the warm-up requests load the rest.
                response = httpx.get(f"{self.base_url}/api/v1/cases", timeout=2)
                answered = response.status_code in {401, 403, 405}
                if answered and len(self.worker_pids()) >= self.workers:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s; see {self.log_path}")

    def worker_pids(self) -> list[int]:
        return child_pids(self.process.pid) if self.process else []

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)  # graceful: workers finish their request
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@contextlib.contextmanager
def gunicorn(**options: Any) -> Iterator[Gunicorn]:
    server = Gunicorn(**options)
    try:
        server.start()
        yield server
    finally:
        server.stop()


class RssSampler:
    """Samples the RSS of gunicorn's workers every `interval` seconds in a thread; keeps
    the peak of each worker and the peak of their sum."""

    def __init__(self, server: Gunicorn, interval: float = 0.25) -> None:
        self.server = server
        self.interval = interval
        self.peak_per_worker_kib: dict[int, int] = {}
        self.peak_total_kib = 0
        self.baseline_total_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self.baseline_total_kib = sum(rss_kib(self.server.worker_pids()).values())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sample()

    def _sample(self) -> None:
        sizes = rss_kib(self.server.worker_pids())
        for pid, kib in sizes.items():
            self.peak_per_worker_kib[pid] = max(self.peak_per_worker_kib.get(pid, 0), kib)
        self.peak_total_kib = max(self.peak_total_kib, sum(sizes.values()))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def summary(self) -> dict[str, Any]:
        return {
            "workers": len(self.peak_per_worker_kib),
            "baseline_total_mib": round(self.baseline_total_kib / 1024, 1),
            "peak_per_worker_mib": sorted(
                round(kib / 1024, 1) for kib in self.peak_per_worker_kib.values()
            ),
            "peak_total_mib": round(self.peak_total_kib / 1024, 1),
        }


# --- results ----------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    memory_kib = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    return {
        "cpus": os.cpu_count(),
        # Other work on the machine skews every number: the load when the result was written.
        "load_average_1_5_15": [round(load, 2) for load in os.getloadavg()],
        "memory_gib": round(memory_kib / 1024 / 1024, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def write_result(name: str, result: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {
        "benchmark": name,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **result,
    }
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def verdict(value: float, limit: float, *, higher_is_better: bool = False) -> str:
    met = value >= limit if higher_is_better else value < limit
    return "met" if met else "MISSED"
