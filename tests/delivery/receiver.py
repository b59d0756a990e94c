"""A real webhook endpoint for the relay to call: an HTTP server on 127.0.0.1 in a thread.

It answers with a programmed sequence of status codes (e.g. [500, 200], or [410]); once the
sequence is used up it repeats its last code. Every request is kept with its headers and raw
body, and its Standard Webhooks signature is checked at the moment it arrives (the check
refuses timestamps more than five minutes off the clock, and tests travel in time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass(frozen=True)
class ReceivedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    answered: int
    signature_error: str | None  # None: the signature verified with the receiver's secret

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


class WebhookReceiver:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._requests: list[ReceivedRequest] = []
        self._script: list[int] = [200]
        self._answered = 0
        self.secret: str | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}/hooks/exception-desk"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # --- programming and reading ------------------------------------------------------
    def answer_with(self, *codes: int) -> None:
        """Answer the next requests with these codes, in order; then repeat the last one."""
        with self._lock:
            self._script = list(codes)
            self._answered = 0

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until at least `count` requests arrived, or `timeout` seconds passed."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self._requests) >= count, timeout)

    # --- the server -----------------------------------------------------------------
    def _next_code(self) -> int:
        code = self._script[min(self._answered, len(self._script) - 1)]
        self._answered += 1
        return code

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                signature_error: str | None = "no secret configured"
                if receiver.secret is not None:
                    try:
                        Webhook(receiver.secret).verify(body, headers)
                        signature_error = None
                    except WebhookVerificationError as error:
                        signature_error = str(error) or type(error).__name__
                with receiver._arrived:
                    code = receiver._next_code()
                    receiver._requests.append(
                        ReceivedRequest(self.path, headers, body, code, signature_error)
                    )
                    receiver._arrived.notify_all()
                reply = b'{"ok": true}' if 200 <= code < 300 else b'{"error": "scripted"}'
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output quiet

        return Handler

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


@contextmanager
def running_receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()
    receiver.start()
    try:
        yield receiver
    finally:
        receiver.stop()
