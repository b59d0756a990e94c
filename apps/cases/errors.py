from __future__ import annotations

from typing import Any


class CaseError(Exception):
    """The one domain error of the cases app.

    kind: "not_found" (404: the actor may not know the case exists), "forbidden" (403),
    "conflict" (409: someone else won, or the case moved on; ``case`` is the current case),
    "invalid" (400/422: ``fields`` maps a field path to messages).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        fields: dict[str, list[str]] | None = None,
        case: Any = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.fields = fields or {}
        self.case = case

    @classmethod
    def invalid(cls, field: str, message: str) -> CaseError:
        return cls("invalid", message, fields={field: [message]})
