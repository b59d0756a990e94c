"""The desk's REST API for a workflow engine: file, read, append evidence, report the side
effect, cancel, and pull decisions.

Retries: a call that is safe to send twice (filing is idempotent by dedupe key; reads,
acks, cancels and side-effect reports are repeatable) is retried on connection errors,
timeouts, 429 and 5xx, with exponential backoff and jitter, sending the very same bytes
each time. Appending evidence is not idempotent (each call adds a version), so it is
resent only when the desk certainly did not process it: the connection was refused or
the desk answered 503. When the budget is spent the call raises DeskUnavailable, and the
workflow must stay where it is: nothing was confirmed.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote

import httpx

from .errors import (
    Conflict,
    DedupeConflict,
    DeskError,
    DeskUnavailable,
    Forbidden,
    InvalidRequest,
    NotFound,
    Unauthorized,
)
from .models import Case, DecisionEvent, EvidenceItem, ReviewPacket

__all__ = ["Desk"]

# Answers that say "not now" rather than "no": the same request may succeed later.
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
# What a non-idempotent call may resend on: the desk certainly did not act on the request.
UNPROCESSED_STATUS = frozenset({503})
UNPROCESSED_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
)

ERROR_CLASSES: dict[int, type[DeskError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    415: InvalidRequest,
}

Resend = Literal["always", "if_unprocessed"]


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)  # money stays exact: JSON numbers are floats
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(body: Any) -> bytes:
    """Canonical JSON: the same packet always encodes to the same bytes."""
    return json.dumps(
        body, default=_json_default, separators=(",", ":"), sort_keys=True, ensure_ascii=False
    ).encode("utf-8")


class Desk:
    """A client of one desk, authenticated by one API key (one source).

    ``retries`` is how many times a call is resent after the first attempt; the delay
    before resend n is drawn from [d/2, d] with d = min(max_backoff, backoff * 2**(n-1))
    seconds (a Retry-After answer lengthens it). Use as a context manager, or call
    ``close()``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        root = base_url.rstrip("/")
        if root.endswith("/api/v1"):
            root = root[: -len("/api/v1")]
        self.base_url = root
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=f"{root}/api/v1/",
            headers={
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json",
                "User-Agent": "exception-desk-client/0.1",
            },
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )

    # --- cases ------------------------------------------------------------------------
    def file_case(self, packet: ReviewPacket | Mapping[str, Any]) -> Case:
        """File the packet, or get back the case already filed under its dedupe key.

        ``Case.created`` tells which. Raises DedupeConflict (with ``case_id``) when the key
        was used with a different packet, another DeskError for any other refusal, and
        DeskUnavailable when the desk stayed unreachable for the whole retry budget.
        """
        response = self._send("POST", "cases", body=packet, resend="always")
        if response.status_code not in (200, 201):
            raise self._error(response, conflict_class=DedupeConflict)
        return Case.from_json(response.json(), created=response.status_code == 201)

    def get_case(self, case_id: str) -> Case:
        return self._case("GET", f"cases/{_segment(case_id)}", body=None, resend="always")

    def append_evidence(self, case_id: str, evidence: Sequence[EvidenceItem]) -> Case:
        """Add the items as the case's next evidence version (a waiting case reopens)."""
        return self._case(
            "POST",
            f"cases/{_segment(case_id)}/evidence",
            body={"evidence": list(evidence)},
            resend="if_unprocessed",
        )

    def report_side_effect(
        self,
        case_id: str,
        *,
        state: Literal["confirmed_applied", "confirmed_rejected"],
        provider_record: Mapping[str, Any],
    ) -> Case:
        """Tell the desk what the destination says happened (its record id, idempotency
        key, status), so the case shows the truth and no one retries blindly."""
        return self._case(
            "POST",
            f"cases/{_segment(case_id)}/side-effect",
            body={"state": state, "provider_record": dict(provider_record)},
            resend="always",
        )

    def cancel(self, case_id: str, *, reason: str = "") -> Case:
        """Close the case as canceled_by_workflow. Raises Conflict once it is decided: then
        the decision stands and will be delivered."""
        return self._case(
            "POST", f"cases/{_segment(case_id)}/cancel", body={"reason": reason}, resend="always"
        )

    # --- the pull feed ----------------------------------------------------------------
    def decisions(self, *, limit: int = 50) -> Iterator[DecisionEvent]:
        """This source's unacknowledged events, oldest first.

        ``for event in desk.decisions(): handle(event); desk.ack(event)``. Pages are
        fetched as the loop goes; each event is yielded once per iteration, and the
        iteration ends when a page holds nothing new (events left unacknowledged stay in
        the feed for the next pass).
        """
        yielded: set[str] = set()
        while True:
            response = self._send("GET", "decisions", params={"limit": limit}, resend="always")
            if response.status_code != 200:
                raise self._error(response)
            page = [DecisionEvent.from_json(item) for item in response.json()["events"]]
            fresh = [event for event in page if event.id not in yielded]
            for event in fresh:
                yielded.add(event.id)
                yield event
            if not fresh or len(page) < limit:
                return

    def ack(self, event: DecisionEvent | str) -> str:
        """Acknowledge an event (repeatable): a decided case becomes resolved. Ack after the
        workflow has durably acted on it, so a crash in between means a redelivery, never
        a lost decision. Returns the event's status ("delivered")."""
        event_id = event.id if isinstance(event, DecisionEvent) else event
        response = self._send(
            "POST", f"decisions/{_segment(event_id)}/ack", body=None, resend="always"
        )
        if response.status_code != 200:
            raise self._error(response)
        return str(response.json()["status"])

    # --- plumbing ---------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _case(self, method: str, path: str, *, body: Any, resend: Resend) -> Case:
        response = self._send(method, path, body=body, resend=resend)
        if response.status_code != 200:
            raise self._error(response)
        return Case.from_json(response.json())

    def _send(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        resend: Resend,
    ) -> httpx.Response:
        # Encoded once: every attempt sends identical bytes, so the desk's dedupe check
        # sees the same packet however many times the network failed in between.
        content = encode(body) if body is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else {}
        retryable_status = RETRYABLE_STATUS if resend == "always" else UNPROCESSED_STATUS
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            try:
                response = self._http.request(
                    method, path, content=content, params=params, headers=headers
                )
            except httpx.TransportError as error:
                resendable = resend == "always" or isinstance(error, UNPROCESSED_ERRORS)
                if not resendable or attempt > self.retries:
                    raise DeskUnavailable(
                        _unreachable_message(error, attempt, resendable), attempts=attempt
                    ) from error
            else:
                if response.status_code not in retryable_status:
                    return response
                if attempt > self.retries:
                    raise DeskUnavailable(
                        f"The desk answered {response.status_code} to {attempt} attempts.",
                        attempts=attempt,
                        status=response.status_code,
                        errors=_errors_of(response),
                        body=_json_or_text(response),
                    )
            self._sleep(self._delay(attempt, response))

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        # Jitter keeps many workflows that failed together from retrying in lock-step.
        delay = random.uniform(ceiling / 2, ceiling)  # noqa: S311 (not for security)
        retry_after = response.headers.get("Retry-After") if response is not None else None
        if retry_after and retry_after.isdigit():
            delay = max(delay, min(float(retry_after), self.max_backoff))
        return delay

    def _error(
        self, response: httpx.Response, *, conflict_class: type[Conflict] = Conflict
    ) -> DeskError:
        body = _json_or_text(response)
        errors = _errors_of(response)
        first = next((messages[0] for messages in errors.values() if messages), "")
        message = f"HTTP {response.status_code}: {first or response.reason_phrase}"
        if response.status_code == 409:
            case_id = body.get("case_id") if isinstance(body, dict) else None
            return conflict_class(message, case_id=case_id, status=409, errors=errors, body=body)
        error_class = ERROR_CLASSES.get(response.status_code, DeskError)
        return error_class(message, status=response.status_code, errors=errors, body=body)


def _segment(value: str) -> str:
    return quote(str(value), safe="")


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _errors_of(response: httpx.Response) -> dict[str, list[str]]:
    body = _json_or_text(response)
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, dict):
        return {}
    return {str(key): [str(item) for item in value] for key, value in errors.items()}


def _unreachable_message(error: httpx.TransportError, attempts: int, resendable: bool) -> str:
    what = f"{type(error).__name__}: {error}"
    if resendable:
        return f"The desk could not be reached in {attempts} attempts ({what})."
    return (
        f"The desk may or may not have processed the request ({what}); it was not resent "
        "because it is not idempotent. Read the case before sending it again."
    )
