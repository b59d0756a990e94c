"""One exception family. Every error the desk answers carries its status and the desk's
``{"errors": {"field.path": ["message"]}}`` dict, so a caller can show or log exactly what
the desk said without parsing messages."""

from __future__ import annotations

from typing import Any


class DeskError(Exception):
    """The desk answered with an error (4xx), or could not be reached (DeskUnavailable)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        errors: dict[str, list[str]] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.errors: dict[str, list[str]] = errors or {}
        self.body = body


class InvalidRequest(DeskError):
    """400 (also 413 and 415): the request was refused as sent; ``errors`` names the fields.
    Retrying the same request cannot succeed."""


class Unauthorized(DeskError):
    """401: no API key, or an invalid or revoked one."""


class Forbidden(DeskError):
    """403: the key may not act on this workflow type."""


class NotFound(DeskError):
    """404: no such case or event for this key."""


class Conflict(DeskError):
    """409: the case's state forbids this (evidence on a decided case, cancel after a
    decision). ``case_id`` names the case."""

    def __init__(self, message: str, *, case_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.case_id = case_id


class DedupeConflict(Conflict):
    """409 from file_case: the dedupe key was used by ``case_id`` with a different packet.
    The workflow re-filed a checkpoint with changed content: a bug to fix, not to retry."""


class DeskUnavailable(DeskError):
    """The desk could not be reached, or kept answering 5xx, for the whole retry budget.
    Nothing was confirmed: the business task must stay where it is and try again later
    with the same packet (same dedupe key)."""

    def __init__(self, message: str, *, attempts: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.attempts = attempts
