"""Every API error has one shape: {"errors": {"field.path": ["message", ...]}}.

Non-field errors use the key "non_field_errors" (or "detail" for auth/permission errors,
"body" for a body that cannot be read: malformed, too large, not JSON).
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import (
    APIException,
    ParseError,
    UnsupportedMediaType,
    ValidationError,
)
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ..errors import CaseError
from .parsers import PayloadTooLarge

# Errors about the body as a whole (unreadable, too large, not JSON) are keyed "body", so a
# client can tell them from a field's error without parsing the message.
BODY_ERRORS = (ParseError, UnsupportedMediaType, PayloadTooLarge)


def flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error detail into dotted field paths (evidence.0.source_timestamp)."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.update(flatten(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            out[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    out.update(flatten(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        out[prefix or "non_field_errors"] = [str(detail)]
    return out


CASE_ERROR_STATUS = {
    "not_found": status.HTTP_404_NOT_FOUND,
    "forbidden": status.HTTP_403_FORBIDDEN,
    "conflict": status.HTTP_409_CONFLICT,
    "invalid": status.HTTP_400_BAD_REQUEST,
}


def case_error_response(error: CaseError) -> Response:
    body: dict[str, Any] = {"errors": error.fields or {"detail": [error.message]}}
    if error.kind == "conflict" and error.case is not None:
        body["case_id"] = error.case.pk
    return Response(body, status=CASE_ERROR_STATUS[error.kind])


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, CaseError):
        return case_error_response(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"errors": flatten(exc.detail)}
    elif isinstance(exc, BODY_ERRORS):
        response.data = {"errors": {"body": [str(exc.detail)]}}
    elif isinstance(exc, APIException):
        response.data = {"errors": {"detail": [str(exc.detail)]}}
    return response
