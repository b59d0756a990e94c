"""A real HTTP server on 127.0.0.1 that answers a script: the desk as it behaves during an
outage (503, 503, then 201), without the desk. Every request is kept, body and all."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedServer:
    def __init__(self, *answers: Answer) -> None:
        self._answers = list(answers)
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _next(self) -> Answer:
        # The last answer repeats once the script is used up.
        return self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with server._lock:
                    server.requests.append(
                        Recorded(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )
                    answer = server._next()
                payload = b"" if answer.body is None else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve  # noqa: N815 (http.server's naming)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


@contextmanager
def scripted_server(*answers: Answer) -> Iterator[ScriptedServer]:
    server = ScriptedServer(*answers)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def case_body(case_id: str = "exc_01scripted", **overrides: Any) -> dict[str, Any]:
    """A case as the desk's API renders it."""
    body: dict[str, Any] = {
        "id": case_id,
        "state": "open",
        "queue": "accounts_payable",
        "severity": "medium",
        "priority": {"band": "p3", "score": 40, "explanation": "", "components": {}},
        "due_at": "2026-09-01T08:59:58+00:00",
        "original_due_at": "2026-09-01T08:59:58+00:00",
        "allowed_resolutions": ["select_po", "request_information", "close_invalid"],
        "version": 1,
        "url": f"http://desk.test/cases/{case_id}/",
        "case_ref": "invoice_8421",
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "side_effect_state": "none_attempted",
        "evidence_version": 1,
        "evidence_digest": "ab" * 32,
        "close_reason": "",
        "delivery_status": "none",
        "created_at": "2026-08-31T14:20:00+00:00",
        "decision": None,
    }
    body.update(overrides)
    return body
