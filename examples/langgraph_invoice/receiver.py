"""The workflow's webhook endpoint: verify the desk's call, then resume the paused thread
exactly once.

LangGraph does not protect a thread from being resumed twice: two resumes at the same
moment both run the side effect. Redeliveries are normal (the desk resends until it gets
a 2xx, and a 2xx can be lost on the way back), so the receiver makes "once" itself:

1. the verifier rejects forged and stale requests, and reports a webhook-id it has seen
   before (the seen store);
2. a replay of an event whose resume the ledger already records is answered 200 at once;
3. everything else waits for the thread's lock, then checks the ledger and the thread's
   checkpoint before resuming: a duplicate that raced the first delivery finds the
   thread already resumed and does nothing.

The lock is per process: run one receiver process per state directory (or replace
ThreadLocks with a lock every process shares, e.g. a PostgreSQL advisory lock).

    python -m examples.langgraph_invoice.receiver --port 8010 \\
        --secret invoice_match=whsec_... --secret refund_approval=whsec_...
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any, Literal
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from exception_desk_client import (
    DecisionEvent,
    SqliteSeenStore,
    WebhookRejected,
    WebhookReplayed,
    WebhookVerifier,
)

from .graph import (
    Workflows,
    add_connection_arguments,
    decision_from_event,
    thread_config,
    workflows_from_arguments,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024

ResumeOutcome = Literal["resumed", "already_applied", "not_waiting", "unknown_thread", "noted"]

# How each outcome is answered. 2xx tells the desk the event is delivered (the case
# resolves); 409 asks it to try again later; 410 stops its retries and puts the case in
# the desk's recovery queue, where a person sees that this workflow cannot take it.
OUTCOME_STATUS: dict[str, HTTPStatus] = {
    "resumed": HTTPStatus.OK,
    "already_applied": HTTPStatus.OK,
    "duplicate": HTTPStatus.OK,
    "noted": HTTPStatus.OK,
    "not_waiting": HTTPStatus.CONFLICT,
    "unknown_thread": HTTPStatus.GONE,
}


class ThreadLocks:
    """One lock per LangGraph thread id, created on demand and dropped when unused."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, list[int]]] = {}

    @contextmanager
    def hold(self, thread_id: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.setdefault(thread_id, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[thread_id]


def thread_of(event: DecisionEvent) -> str:
    # The graphs file their thread id as both the resume handle and the instance id.
    return event.resume_handle or str(event.data.get("workflow_instance_id") or "")


class Resumer:
    """Resumes a paused thread with a decision, at most once per thread."""

    def __init__(self, workflows: Workflows) -> None:
        self.workflows = workflows
        self.locks = ThreadLocks()

    def already_resumed(self, event: DecisionEvent) -> bool:
        return self.workflows.ledger.resumed_by(thread_of(event)) is not None

    def resume(self, event: DecisionEvent) -> ResumeOutcome:
        if not event.is_decision:
            # case.information_requested: someone was asked for more; the thread stays
            # paused until the decision arrives as its own event.
            return "noted"
        thread_id = thread_of(event)
        workflow_type = str(event.data.get("workflow_type") or "")
        graph = self.workflows.graph_for(workflow_type)
        if graph is None or not thread_id:
            return "unknown_thread"
        ledger = self.workflows.ledger
        with self.locks.hold(thread_id):
            # Inside the lock every check below sees the result of any resume before it.
            if ledger.resumed_by(thread_id) is not None:
                return "already_applied"
            if self.workflows.workflow_type_of(thread_id) != workflow_type:
                return "unknown_thread"  # never started here, or a thread of another graph
            snapshot = graph.get_state(thread_config(thread_id))
            if not snapshot.next:
                # Finished, yet not recorded: the process stopped between the two. Record it
                # now; resuming again would be LangGraph's silent no-op anyway.
                self._record(thread_id, event)
                return "already_applied"
            paused_at = (snapshot.config.get("configurable") or {}).get("checkpoint_id")
            if not snapshot.interrupts or paused_at != event.data.get("checkpoint_id"):
                return "not_waiting"  # not paused at the checkpoint this case was filed from
            self.workflows.resume(thread_id, workflow_type, decision_from_event(event))
            self._record(thread_id, event)
            return "resumed"

    def _record(self, thread_id: str, event: DecisionEvent) -> None:
        self.workflows.ledger.record_resume(
            thread_id=thread_id,
            event_id=event.id,
            case_id=event.case_id,
            resolution=event.resolution,
        )


# --- the WSGI application -----------------------------------------------------------------

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class ReceiverApp:
    """POST /webhooks/<workflow_type>: one verifier (one signing secret) per type."""

    def __init__(self, verifiers: Mapping[str, WebhookVerifier], resumer: Resumer) -> None:
        self.verifiers = dict(verifiers)
        self.resumer = resumer

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO") or "")
        prefix, _, workflow_type = path.strip("/").partition("/")
        verifier = self.verifiers.get(workflow_type) if prefix == "webhooks" else None
        if verifier is None:
            return _answer(start_response, HTTPStatus.NOT_FOUND, {"error": "no such endpoint"})
        if environ.get("REQUEST_METHOD") != "POST":
            return _answer(
                start_response,
                HTTPStatus.METHOD_NOT_ALLOWED,
                {"error": "POST only"},
                extra_headers=[("Allow", "POST")],
            )
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY_BYTES:
            return _answer(start_response, HTTPStatus.BAD_REQUEST, {"error": "bad length"})
        body = environ["wsgi.input"].read(length)
        headers = {
            key[5:].replace("_", "-").lower(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        try:
            event = verifier.verify(body, headers)
        except WebhookReplayed as replay:
            event = replay.event
            if self.resumer.already_resumed(event):
                return _answer(start_response, HTTPStatus.OK, _status("duplicate", event))
            # Seen but not yet applied: a duplicate racing the first delivery, or the
            # desk's retry after this process failed mid-resume. The lock and the ledger
            # make going on safe, and going on is what recovers the second case.
        except WebhookRejected as error:
            logger.warning("rejected a webhook: %s", error)
            return _answer(start_response, HTTPStatus.BAD_REQUEST, {"error": str(error)})
        if str(event.data.get("workflow_type") or "") != workflow_type:
            return _answer(start_response, HTTPStatus.BAD_REQUEST, {"error": "wrong endpoint"})
        try:
            outcome = self.resumer.resume(event)
        except Exception:
            # The desk retries with the same event id; the ledger has no record of a resume,
            # so that retry resumes.
            logger.exception("resuming %s failed", thread_of(event))
            return _answer(
                start_response, HTTPStatus.INTERNAL_SERVER_ERROR, _status("failed", event)
            )
        return _answer(start_response, OUTCOME_STATUS[outcome], _status(outcome, event))


def _status(outcome: str, event: DecisionEvent) -> dict[str, str]:
    return {"status": outcome, "event_id": event.id, "thread_id": thread_of(event)}


def _answer(
    start_response: StartResponse,
    status: HTTPStatus,
    body: dict[str, Any],
    *,
    extra_headers: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    payload = json.dumps(body).encode("utf-8")
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
    start_response(f"{status.value} {status.phrase}", headers + (extra_headers or []))
    return [payload]


# --- serving ------------------------------------------------------------------------------


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """A request per thread, so two deliveries really can arrive at the same moment."""

    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib's name)
        logger.debug("%s " + format, self.address_string(), *args)


@dataclass
class RunningReceiver:
    server: ThreadingWSGIServer
    thread: threading.Thread

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def url_for(self, workflow_type: str) -> str:
        return f"{self.base_url}/webhooks/{workflow_type}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def serve_in_thread(app: ReceiverApp, *, host: str = "127.0.0.1", port: int = 0) -> RunningReceiver:
    """Start the receiver on a background thread (port 0: any free port)."""
    server = make_server(
        host, port, app, server_class=ThreadingWSGIServer, handler_class=QuietHandler
    )
    thread = threading.Thread(target=server.serve_forever, name="webhook-receiver", daemon=True)
    thread.start()
    return RunningReceiver(server=server, thread=thread)  # type: ignore[arg-type]


def build_app(
    workflows: Workflows, secrets: Mapping[str, str], state_dir: str | Path
) -> ReceiverApp:
    """One seen store for all types: event ids are unique across the desk."""
    seen = SqliteSeenStore(Path(state_dir) / "seen_webhooks.sqlite")
    verifiers = {name: WebhookVerifier(secret, seen) for name, secret in secrets.items()}
    return ReceiverApp(verifiers, Resumer(workflows))


def _parse_secrets(values: list[str]) -> dict[str, str]:
    secrets: dict[str, str] = {}
    for value in values:
        name, separator, secret = value.partition("=")
        if not separator or not secret.startswith("whsec_"):
            raise SystemExit(f"--secret wants WORKFLOW_TYPE=whsec_..., got {value!r}")
        secrets[name] = secret
    return secrets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Receive the desk's webhooks and resume.")
    add_connection_arguments(parser)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8010)
    parser.add_argument(
        "--secret",
        action="append",
        default=[s for s in os.environ.get("DESK_WEBHOOK_SECRETS", "").split(",") if s],
        help="WORKFLOW_TYPE=whsec_... (repeat per type; env DESK_WEBHOOK_SECRETS, comma-separated)",
    )
    arguments = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    secrets = _parse_secrets(arguments.secret)
    if not secrets:
        raise SystemExit("Give at least one --secret WORKFLOW_TYPE=whsec_... (Django admin).")
    workflows = workflows_from_arguments(arguments)
    app = build_app(workflows, secrets, arguments.state_dir)
    server = make_server(
        arguments.host,
        arguments.port,
        app,
        server_class=ThreadingWSGIServer,
        handler_class=QuietHandler,
    )
    for name in secrets:
        logger.info(
            "callback URL for %s: http://%s:%d/webhooks/%s",
            name,
            arguments.host,
            arguments.port,
            name,
        )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        workflows.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
