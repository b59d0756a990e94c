"""The API's one body parser: strict JSON with a size limit.

DRF reads the request stream itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE never applies
to API bodies; the limit is enforced here, from the declared length when there is one and
by reading at most one byte past the limit when there is not (chunked uploads).
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.utils.translation import gettext, gettext_lazy
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import BaseParser, get_encoding

# Deep nesting is never a real packet; refusing it keeps every later json.dumps, digest and
# database write far from Python's recursion limit (which would be a 500, not a 400).
MAX_DEPTH = 64


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(current, dict):
            stack.extend((item, level + 1) for item in current.values())
        elif isinstance(current, list):
            stack.extend((item, level + 1) for item in current)
    return deepest


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = gettext_lazy("The request body is too large.")
    default_code = "payload_too_large"


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON, and PostgreSQL's jsonb refuses them: reject at the door.
    raise ValueError(gettext("%(name)s is not valid JSON.") % {"name": name})


class LimitedJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        parser_context = parser_context or {}
        limit = int(settings.EXCEPTION_DESK["MAX_BODY_BYTES"])
        too_large = PayloadTooLarge(
            gettext("The request body is larger than %(limit)d bytes.") % {"limit": limit}
        )
        request = parser_context.get("request")
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0) if request else 0
        except ValueError:
            declared = 0  # unreadable: fall back to counting what arrives
        if declared > limit:
            raise too_large
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise too_large
        encoding = get_encoding(parser_context)
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_reject_constant)
        except UnicodeDecodeError as error:
            raise ParseError(
                gettext("The body is not valid %(encoding)s text.") % {"encoding": encoding}
            ) from error
        except ValueError as error:
            raise ParseError(
                gettext("The body is not valid JSON: %(error)s") % {"error": error}
            ) from error
        except RecursionError as error:
            raise ParseError(gettext("The body is nested too deeply.")) from error
        if _depth(data) > MAX_DEPTH:
            raise ParseError(
                gettext("The body is nested deeper than %(limit)d levels.") % {"limit": MAX_DEPTH}
            )
        return data
