"""The embedded default `make run` relies on: with no DATABASE_URL / REDIS_URL the desk
migrates, seeds and serves on SQLite and Celery's filesystem broker. And the production
settings pass Django's deployment checks.

These run real `manage.py` processes, as a person would on a bare machine.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from apps.cases.demo import DEMO_PASSWORD

BASE_DIR = Path(__file__).resolve().parents[2]
# Settings the embedded default must not see: the test run itself points them at PostgreSQL
# and Redis (config/settings/test.py puts them in os.environ).
SERVICE_VARIABLES = {
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "EXCEPTION_DESK_VAR_DIR",
    # Set by the browser tests for Playwright's sync API; a deployment never has it, and
    # `check --deploy` rightly refuses it.
    "DJANGO_ALLOW_ASYNC_UNSAFE",
}


def manage(*args: str, env: dict[str, str], timeout: float = 240) -> str:
    result = subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class EmbeddedDesk:
    url: str
    var_dir: Path
    seed_output: str
    log: Path

    @property
    def database(self) -> Path:
        return self.var_dir / "exception_desk.sqlite3"

    def query(self, sql: str, *params: object) -> list[tuple]:
        with sqlite3.connect(self.database) as connection:
            return connection.execute(sql, params).fetchall()


def wait_until_serving(url: str, server: subprocess.Popen, log: Path) -> None:
    """Bounded readiness poll: the real server process must bind its socket first."""
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"server did not answer:\n{log.read_text()}"
        try:
            server.wait(timeout=0.2)  # returns only if the server died
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"server exited with {server.returncode}:\n{log.read_text()}")


@pytest.fixture(scope="module")
def embedded_desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedDesk]:
    root = tmp_path_factory.mktemp("embedded")
    var_dir = root / "var"
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", EXCEPTION_DESK_VAR_DIR=str(var_dir))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    manage("migrate", "--noinput", env=env)
    seed_output = manage("seed_demo", "--base-url", url, env=env)
    log = root / "server.log"
    with log.open("w") as log_file:
        server = subprocess.Popen(  # noqa: S603
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=BASE_DIR,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_serving(f"{url}/accounts/login/", server, log)
        yield EmbeddedDesk(url=url, var_dir=var_dir, seed_output=seed_output, log=log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def log_in(desk: EmbeddedDesk, username: str) -> httpx.Client:
    client = httpx.Client(base_url=desk.url, timeout=10)
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, "the login form carries a CSRF token"
    response = client.post(
        "/accounts/login/",
        data={
            "username": username,
            "password": DEMO_PASSWORD,
            "csrfmiddlewaretoken": token.group(1),
        },
    )
    assert response.status_code == 302, f"login failed: {response.status_code}"
    return client


def case_refs(desk: EmbeddedDesk, queues: list[str], states: list[str]) -> set[str]:
    rows = desk.query(
        "SELECT c.case_ref, q.name, c.state FROM cases_case c "
        "JOIN routing_queue q ON q.id = c.queue_id"
    )
    return {ref for ref, queue, state in rows if queue in queues and state in states}


def test_embedded_default_uses_sqlite_and_the_filesystem_broker(embedded_desk):
    assert embedded_desk.database.is_file()
    for folder in ("queue", "processed", "control"):
        assert (embedded_desk.var_dir / "broker" / folder).is_dir()
    (journal_mode,) = embedded_desk.query("PRAGMA journal_mode")[0]
    assert journal_mode == "wal"
    # Decisions the seed made were handed to the broker: files in its queue folder.
    assert any((embedded_desk.var_dir / "broker" / "queue").iterdir())


def test_demo_worker_signs_in_and_sees_the_cases_of_her_queues(embedded_desk):
    client = log_in(embedded_desk, "wendy")
    page = client.get("/")
    assert page.status_code == 200
    mine = case_refs(embedded_desk, ["accounts_payable", "finance_approvals"], ["open"])
    assert mine, "the seed filed open cases in wendy's queues"
    assert any(ref in page.text for ref in mine)
    out_of_scope = case_refs(embedded_desk, ["security_review", "triage"], ["open", "claimed"])
    assert out_of_scope and not any(ref in page.text for ref in out_of_scope)


def test_seed_prints_the_demo_logins_with_their_password(embedded_desk):
    assert f"password for all: {DEMO_PASSWORD}" in embedded_desk.seed_output
    for username in ("ada", "sam", "wendy", "walter", "pat", "alice", "quinn"):
        assert f"  {username} " in embedded_desk.seed_output


def test_demo_webhook_receiver_accepts_signed_events_and_rejects_forged_ones(embedded_desk):
    (secret,) = embedded_desk.query(
        "SELECT signing_secret FROM workflows_workflowtype WHERE name = ?", "invoice_match"
    )[0]
    body = json.dumps({"id": "evt_smoke", "type": "case.decided", "data": {"case_id": "exc_x"}})
    now = datetime.now(tz=UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": "evt_smoke",
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign("evt_smoke", now, body),
    }
    receiver = f"{embedded_desk.url}/demo/webhooks/invoice_match/"
    assert httpx.post(receiver, content=body, headers=headers).status_code == 204
    forged = Webhook("whsec_" + "A" * 44).sign("evt_smoke", now, body)
    rejected = httpx.post(receiver, content=body, headers={**headers, "webhook-signature": forged})
    assert rejected.status_code == 400
    assert httpx.get(receiver).status_code == 405


def test_production_settings_pass_the_deployment_checks(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="desk.example.com",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/exception_desk",
        REDIS_URL="redis://127.0.0.1:6379/0",
        EXCEPTION_DESK_VAR_DIR=str(tmp_path / "var"),
    )
    output = manage("check", "--deploy", "--fail-level", "WARNING", env=env, timeout=120)
    assert "no issues" in output


def test_production_settings_refuse_to_start_without_a_secret_key(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        ALLOWED_HOSTS="desk.example.com",
        EXCEPTION_DESK_VAR_DIR=str(tmp_path / "var"),
    )
    result = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
