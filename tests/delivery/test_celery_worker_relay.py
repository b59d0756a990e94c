"""The real path: the decision commits, on_commit enqueues the relay on Redis, a real Celery
worker process picks it up and POSTs the signed event to a real endpoint, and the case
resolves. Marked `threaded` (a real worker process plus the receiver thread)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings

from apps.audit.models import AuditEvent
from apps.cases.models import DeliveryAttempt, DeliveryStatus, OutboxEvent, State
from config.celery import app as celery_app

from .helpers import claim_and_decide, database_url_for_other_processes

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

WORKER_DEADLINE_SECONDS = 60


def wait_until(condition: Callable[[], bool], *, seconds: float, alive: Callable[[], bool]) -> bool:
    """Poll a condition a real process has to make true, up to a deadline."""
    pause = threading.Event()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        if not alive():
            return condition()
        pause.wait(0.1)
    return condition()


@pytest.fixture
def celery_worker_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    broker_url = celery_app.conf.broker_url
    assert broker_url and broker_url.startswith("redis://"), (
        f"a real worker needs the Redis broker, got {broker_url!r}"
    )
    # Messages left by earlier tests name events that no longer exist; start clean.
    celery_app.control.purge()
    log_path = tmp_path / "celery-worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url_for_other_processes(),
        "REDIS_URL": broker_url,
        "CELERY_BROKER_URL": broker_url,
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 (our own interpreter, fixed arguments)
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "--concurrency=1",
                "-Q",
                "celery",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process, log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_real_celery_worker_delivers_the_decision_once_and_the_case_resolves(
    celery_worker_process, webhook_receiver, file_invoice_case, worker
):
    process, log_path = celery_worker_process

    def worker_log() -> str:
        return log_path.read_text(errors="replace")[-4000:]

    def alive() -> bool:
        return process.poll() is None

    # A normal decision: on commit, relay_event_task.delay(event_id) goes to Redis.
    case, event = claim_and_decide(file_invoice_case(), worker)

    assert wait_until(
        lambda: len(webhook_receiver.requests) >= 1,
        seconds=WORKER_DEADLINE_SECONDS,
        alive=alive,
    ), f"the worker never called the endpoint\n{worker_log()}"

    def resolved() -> bool:
        case.refresh_from_db()
        return case.state == State.RESOLVED

    assert wait_until(resolved, seconds=30, alive=alive), (
        f"case stayed {case.state}\n{worker_log()}"
    )
    assert case.delivery_status == DeliveryStatus.DELIVERED
    (request,) = webhook_receiver.requests
    assert request.webhook_id == event.pk
    assert request.signature_error is None
    event.refresh_from_db()
    assert event.delivered_via == "webhook"
    assert list(
        DeliveryAttempt.objects.filter(event=event).values_list("status_code", flat=True)
    ) == [200]
    assert OutboxEvent.objects.filter(case=case).count() == 1
    assert AuditEvent.objects.filter(stream=case.pk, action="case.resumed").count() == 1
    assert alive(), worker_log()
    # The worker process did the sending, not this test process: it logs the task's outcome
    # (just after the commit the test saw, hence the wait).
    assert wait_until(
        lambda: "cases.relay_event[" in worker_log() and "'delivered'" in worker_log(),
        seconds=10,
        alive=alive,
    ), worker_log()
