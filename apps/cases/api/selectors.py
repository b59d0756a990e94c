"""Reads for the API. A source sees only cases of its own workflow types; any other case
is "not found", exactly like a case that does not exist (its existence is not revealed)."""

from __future__ import annotations

from apps.workflows.models import ApiSource

from ..errors import CaseError
from ..models import Case


def case_for_source(*, source: ApiSource, case_id: str) -> Case:
    case = (
        Case.objects.select_related("queue", "workflow_type", "exception_class", "decision")
        .filter(pk=case_id, workflow_type__in=source.workflow_types.all())
        .first()
    )
    if case is None:
        raise CaseError("not_found", "No such case.")
    return case
