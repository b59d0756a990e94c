"""Small presentation helpers for the worker pages: relative times in words, JSON shown
as text, and whether to offer the supervisor's navigation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from ..selectors import supervises_any_queue

register = template.Library()


def _duration(seconds: float) -> str:
    minutes = int(abs(seconds) // 60)
    if minutes < 1:
        return _("less than a minute")
    if minutes < 120:
        return ngettext("%(n)d minute", "%(n)d minutes", minutes) % {"n": minutes}
    hours = minutes // 60
    if hours < 48:
        return ngettext("%(n)d hour", "%(n)d hours", hours) % {"n": hours}
    days = hours // 24
    return ngettext("%(n)d day", "%(n)d days", days) % {"n": days}


@register.filter
def due_in(value: datetime | None) -> str:
    """ "in 40 minutes" or "overdue by 2 hours": the words carry the meaning, not a colour."""
    if value is None:
        return ""
    seconds = (value - timezone.now()).total_seconds()
    if seconds < 0:
        return _("overdue by %(duration)s") % {"duration": _duration(seconds)}
    return _("in %(duration)s") % {"duration": _duration(seconds)}


@register.filter
def is_overdue(value: datetime | None) -> bool:
    return value is not None and value <= timezone.now()


@register.filter
def age(value: datetime | None) -> str:
    if value is None:
        return ""
    return _duration((timezone.now() - value).total_seconds())


@register.filter
def ago(value: datetime | None) -> str:
    if value is None:
        return ""
    return _("%(duration)s ago") % {"duration": _duration((timezone.now() - value).total_seconds())}


@register.filter
def is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


@register.filter
def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@register.filter
def as_text(value: Any) -> str:
    """Scalars as they are; lists and objects as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@register.simple_tag(takes_context=True)
def supervises_any(context: template.Context) -> bool:
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return False
    return supervises_any_queue(request.user)


@register.filter
def lookup(mapping: Mapping[str, Any] | None, key: str) -> Any:
    if not mapping:
        return ""
    return mapping.get(key, key)


@register.filter
def priority_reason(explanation: str) -> str:
    """The explanation without its leading band ("P2: medium severity, …" → "medium
    severity, …"); the band is shown on its own."""
    band, separator, reason = (explanation or "").partition(": ")
    return reason if separator and band.startswith("P") else explanation
