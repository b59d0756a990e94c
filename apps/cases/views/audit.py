"""The auditor history: audit events of the cases a reader may see (and configuration, for
auditors and admins), filtered and paginated, with the hash chains of the shown streams
verified; and the same selection exported as CSV, the export itself audited first.

Read-only roles: auditor, supervisor, admin (groups). Scope is the queue, as everywhere:
case streams only for cases in queues the reader has view_queue on.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from apps.audit import selectors as audit
from apps.audit.forms import HistoryFilterForm
from apps.audit.models import AuditEvent
from apps.audit.services import Actor, canonical_json, record

from ..access import visible_queues
from ..models import Case
from .common import HtmxHttpRequest, login_required_page

HISTORY_GROUPS = frozenset({"auditor", "supervisor", "admin"})
CONFIG_GROUPS = frozenset({"auditor", "admin"})
PAGE_SIZE = 50
EXPORT_CHUNK = 500
CSV_COLUMNS = [
    "time",
    "stream",
    "sequence",
    "actor_kind",
    "actor",
    "action",
    "reason",
    "before",
    "after",
    "previous_hash",
    "hash",
]


def _roles(user: Any) -> frozenset[str]:
    """The reader's history roles, read once per request (the page and the nav both ask)."""
    cached = getattr(user, "_history_roles", None)
    if cached is None:
        if not user.is_authenticated:
            cached = frozenset()
        elif user.is_superuser:
            cached = HISTORY_GROUPS
        else:
            cached = frozenset(
                user.groups.filter(name__in=HISTORY_GROUPS).values_list("name", flat=True)
            )
        user._history_roles = cached
    return cached


def reads_history(user: Any) -> bool:
    return bool(_roles(user))


def _require_reader(user: Any) -> None:
    # 403, not an empty page: an empty history would suggest that nothing happened.
    if not reads_history(user):
        raise PermissionDenied(_("The history is for auditors and supervisors."))


def _events(user: Any, filters: audit.HistoryFilters) -> QuerySet[AuditEvent]:
    visible_cases = Case.objects.filter(queue__in=visible_queues(user)).values("pk")
    aliases = Case.objects.filter(case_ref=filters.stream).values("pk") if filters.stream else None
    return audit.history_events(
        visible_case_ids=visible_cases,
        include_config=bool(_roles(user) & CONFIG_GROUPS),
        filters=filters,
        stream_aliases=aliases,
    )


@dataclass(frozen=True)
class Row:
    event: AuditEvent
    is_config: bool
    changes: list[audit.Change]


@login_required_page
@require_safe
def history(request: HtmxHttpRequest) -> HttpResponse:
    _require_reader(request.user)
    form = HistoryFilterForm(request.GET)
    filters = form.filters()
    page = Paginator(_events(request.user, filters), PAGE_SIZE).get_page(request.GET.get("page"))
    events = list(page.object_list)
    streams = sorted({event.stream for event in events})
    querystring = urlencode(filters.as_dict())

    def page_link(number: int) -> str:
        return urlencode({**filters.as_dict(), "page": number})

    context = {
        "nav": "history",
        "form": form,
        "page": page,
        "rows": [
            Row(
                event,
                audit.is_config_stream(event.stream),
                audit.changes(event.before, event.after),
            )
            for event in events
        ],
        "streams": streams,
        "broken": audit.broken_links(streams),
        "querystring": querystring,
        "previous_querystring": page_link(page.previous_page_number())
        if page.has_previous()
        else "",
        "next_querystring": page_link(page.next_page_number()) if page.has_next() else "",
    }
    return render(request, "cases/audit_history.html", context)


class _Echo:
    """csv.writer writes into this and gets the line back, so rows can be streamed."""

    def write(self, value: str) -> str:
        return value


def _csv_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_COLUMNS)
    for event in events.iterator(chunk_size=EXPORT_CHUNK):
        yield writer.writerow(
            [
                event.created_at.isoformat(),
                event.stream,
                event.sequence,
                event.actor_kind,
                event.actor_label,
                event.action,
                event.reason,
                # Canonical JSON: the exact form the event's hash was taken over.
                canonical_json(event.before).decode("utf-8"),
                canonical_json(event.after).decode("utf-8"),
                event.previous_hash,
                event.hash,
            ]
        )


@login_required_page
@require_safe
def history_export(request: HtmxHttpRequest) -> StreamingHttpResponse:
    _require_reader(request.user)
    filters = HistoryFilterForm(request.GET).filters()
    # Recorded, and committed, before a single row leaves: an export that fails half-way
    # is still on the record, and there is no export that is not.
    with transaction.atomic():
        record(
            stream=audit.EXPORT_STREAM,
            actor=Actor.user(request.user),
            action=audit.EXPORT_ACTION,
            after={"filters": filters.as_dict()},
        )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response = StreamingHttpResponse(
        _csv_lines(_events(request.user, filters)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="audit-history-{stamp}.csv"'
    return response
