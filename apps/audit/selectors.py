"""Reads for the auditor history: the events a reader may see, filtered, newest first; what
each event changed; whether the chains shown are intact.

Floor 1: this module knows streams, not cases. The caller (the cases app's history page)
passes the case ids the reader may see as a subquery, so scope is one SQL condition.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Q, QuerySet

from .models import AuditEvent
from .services import BrokenLink, verify

CONFIG_PREFIX = "config:"
EXPORT_STREAM = "config:audit.export"
EXPORT_ACTION = "audit.exported"
# Longest value shown in the "changes" summary; the export carries the full JSON.
SUMMARY_VALUE_LENGTH = 40


@dataclass(frozen=True)
class HistoryFilters:
    stream: str = ""
    action: str = ""
    actor: str = ""
    date_from: date | None = None
    date_to: date | None = None

    def as_dict(self) -> dict[str, str]:
        """The filters as recorded in the export's audit event and put in links."""
        values = {
            "stream": self.stream,
            "action_type": self.action,
            "actor": self.actor,
            "date_from": self.date_from.isoformat() if self.date_from else "",
            "date_to": self.date_to.isoformat() if self.date_to else "",
        }
        return {key: value for key, value in values.items() if value}


def history_events(
    *,
    visible_case_ids: QuerySet[Any],
    include_config: bool,
    filters: HistoryFilters,
    stream_aliases: QuerySet[Any] | None = None,
) -> QuerySet[AuditEvent]:
    """The events of the visible case streams (and of configuration, for readers allowed to
    see it) matching the filters, newest first. `stream_aliases` are further streams that
    the stream filter's text names (the case ids whose reference it is)."""
    scope = Q(stream__in=visible_case_ids)
    if include_config:
        scope |= Q(stream__startswith=CONFIG_PREFIX)
    events = AuditEvent.objects.filter(scope)
    if filters.stream:
        named = Q(stream=filters.stream)
        if stream_aliases is not None:
            named |= Q(stream__in=stream_aliases)
        events = events.filter(named)
    if filters.action:
        events = events.filter(action__istartswith=filters.action)
    if filters.actor:
        events = events.filter(actor_label__icontains=filters.actor)
    if filters.date_from:
        events = events.filter(created_at__date__gte=filters.date_from)
    if filters.date_to:
        events = events.filter(created_at__date__lte=filters.date_to)
    # The id breaks ties between events of one transaction: pages stay stable.
    return events.order_by("-created_at", "-id")


def is_config_stream(stream: str) -> bool:
    return stream.startswith(CONFIG_PREFIX)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if len(text) > SUMMARY_VALUE_LENGTH:
        return text[: SUMMARY_VALUE_LENGTH - 1] + "…"
    return text


@dataclass(frozen=True)
class Change:
    key: str
    before: str  # "" when the key was absent before
    after: str  # "" when the key is absent after


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """The keys whose value differs between before and after, in key order."""
    before, after = before or {}, after or {}
    return [
        Change(
            key=key,
            before=_short(before[key]) if key in before else "",
            after=_short(after[key]) if key in after else "",
        )
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def broken_links(streams: list[str]) -> list[BrokenLink]:
    """Every broken link of these streams (whole streams: a chain is checked from its
    start). The page passes only the streams it shows, so the work stays bounded."""
    if not streams:
        return []
    return list(verify(sorted(set(streams))))
