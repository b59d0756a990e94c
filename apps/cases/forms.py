"""Forms of the worker pages. They parse and shape input; the services validate the
business rules (field schemas, leases, versions) and the views map their errors back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.routing.models import ExceptionClass, Queue, Resolution

from .models import Case, SideEffectState, State
from .selectors import (
    ANY_STATE,
    DEFAULT_SORT,
    SORT_ORDERINGS,
    QueueFilters,
    reroute_targets,
    transfer_targets,
)

# --- Queue page -------------------------------------------------------------------------

FILTER_KEYS = ("q", "queue", "state", "exception_class", "mine", "sort")
SORTABLE_COLUMNS = (
    ("priority", _("Priority")),
    ("due", _("Due")),
    ("age", _("Age")),
)


class QueueFilterForm(forms.Form):
    q = forms.CharField(label=_("Search case or summary"), required=False, max_length=200)
    queue = forms.ChoiceField(label=_("Queue"), required=False)
    state = forms.ChoiceField(label=_("State"), required=False)
    exception_class = forms.ChoiceField(label=_("Exception class"), required=False)
    mine = forms.BooleanField(label=_("Only cases I hold"), required=False)
    sort = forms.ChoiceField(
        required=False,
        choices=[(key, key) for key in SORT_ORDERINGS],
        widget=forms.HiddenInput,
    )

    def __init__(
        self,
        data: QueryDict,
        *,
        queues: list[Queue],
        exception_classes: list[ExceptionClass],
    ) -> None:
        super().__init__(data)
        self.fields["queue"].choices = [("", _("All my queues"))] + [
            (queue.name, str(queue)) for queue in queues
        ]
        self.fields["state"].choices = [
            ("", _("Active (open, claimed, waiting)")),
            (ANY_STATE, _("Any state")),
            *State.choices,
        ]
        self.fields["exception_class"].choices = [("", _("Any class"))] + [
            (exception_class.code, str(exception_class)) for exception_class in exception_classes
        ]

    def filters(self) -> QueueFilters:
        """The valid part of the input; a bad value falls back to its default (and the
        field shows its error)."""
        self.is_valid()
        data = self.cleaned_data
        return QueueFilters(
            queue=data.get("queue") or "",
            state=data.get("state") or "",
            exception_class=data.get("exception_class") or "",
            text=(data.get("q") or "").strip(),
            mine=bool(data.get("mine")),
            sort=data.get("sort") or DEFAULT_SORT,
        )


def filter_querystring(filters: QueueFilters, **changes: Any) -> str:
    """The canonical query string of a filter set: only non-default values, fixed order.
    Saved views and sort/page links are built from it, so equal views have equal URLs."""
    values = {
        "q": filters.text,
        "queue": filters.queue,
        "state": filters.state,
        "exception_class": filters.exception_class,
        "mine": "1" if filters.mine else "",
        "sort": "" if filters.sort == DEFAULT_SORT else filters.sort,
    }
    values.update({key: str(value) for key, value in changes.items()})
    return urlencode([(key, value) for key, value in values.items() if value])


def canonical_querystring(raw: str) -> str:
    """Keep only the filter keys of a query string (saved views store nothing else)."""
    parsed = QueryDict(raw)
    return urlencode([(key, parsed[key]) for key in FILTER_KEYS if parsed.get(key)])


@dataclass(frozen=True)
class SortHeader:
    key: str
    label: str
    querystring: str
    aria_sort: str  # "ascending" | "descending" | "" (not sorted by this column)
    direction_label: str


def sort_headers(filters: QueueFilters) -> dict[str, SortHeader]:
    """Header links: the sorted column toggles its direction, another column sorts ascending."""
    headers = {}
    for key, label in SORTABLE_COLUMNS:
        if filters.sort == key:
            aria_sort, target, direction = "ascending", f"-{key}", _("ascending")
        elif filters.sort == f"-{key}":
            aria_sort, target, direction = "descending", key, _("descending")
        else:
            aria_sort, target, direction = "", key, ""
        headers[key] = SortHeader(
            key=key,
            label=str(label),
            querystring=filter_querystring(filters, sort=target if target != DEFAULT_SORT else ""),
            aria_sort=aria_sort,
            direction_label=str(direction),
        )
    return headers


class SavedViewForm(forms.Form):
    name = forms.CharField(label=_("Name this view"), max_length=80)
    querystring = forms.CharField(required=False, max_length=1000, widget=forms.HiddenInput)

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError(_("Give the view a name."))
        return name

    def clean_querystring(self) -> str:
        return canonical_querystring(self.cleaned_data.get("querystring") or "")


# --- Decision page ----------------------------------------------------------------------


def field_input_name(resolution_code: str, field_name: str) -> str:
    """Each resolution's fields get their own input names: two resolutions may share a
    field name (corrected_value) and both are in the page at once without JavaScript."""
    return f"field-{resolution_code}-{field_name}"


def posted_fields(data: QueryDict, resolution: Resolution | None) -> dict[str, str]:
    """The chosen resolution's field values, keyed by the schema's names. Inputs of other
    resolutions are ignored; empty inputs are left out so "required" is the service's call."""
    if resolution is None:
        return {}
    values = {}
    for spec in resolution.field_schema:
        raw = data.get(field_input_name(resolution.code, spec["name"]), "")
        if raw.strip():
            values[spec["name"]] = raw
    return values


class DecisionForm(forms.Form):
    expected_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    lease_token = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    evidence_digest = forms.CharField(max_length=64, widget=forms.HiddenInput)
    resolution_id = forms.CharField(max_length=64, widget=forms.HiddenInput)
    resolution = forms.CharField(label=_("Resolution"), required=False, max_length=64)
    note = forms.CharField(label=_("Reason or note"), required=False, max_length=4000)
    confirm = forms.BooleanField(required=False)


class DraftForm(forms.Form):
    resolution = forms.CharField(required=False, max_length=64)
    note = forms.CharField(required=False, max_length=4000)


class LeaseForm(forms.Form):
    lease_token = forms.CharField(max_length=64, widget=forms.HiddenInput)


class RequestInformationForm(forms.Form):
    expected_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    lease_token = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    question = forms.CharField(
        label=_("What information is needed?"), required=False, max_length=2000
    )
    asked_of = forms.CharField(label=_("Whom are you asking?"), required=False, max_length=200)


class RecordAnswerForm(forms.Form):
    answer = forms.CharField(label=_("Answer received"), required=False, max_length=4000)


class ReconcileForm(forms.Form):
    expected_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    state = forms.ChoiceField(
        label=_("What does the destination show?"),
        required=False,
        choices=[
            (SideEffectState.CONFIRMED_APPLIED, _("The write was applied")),
            (SideEffectState.CONFIRMED_REJECTED, _("The write was rejected or never arrived")),
        ],
    )
    provider_record = forms.CharField(
        label=_("Provider record or idempotency key"), required=False, max_length=200
    )


# --- Rendering the bounded decision form from the field schemas ---------------------------


@dataclass
class SchemaInput:
    """One input of a resolution, ready for the template (no widget magic: the markup,
    labels and ARIA wiring are written out in cases/detail.html)."""

    name: str
    input_name: str
    label: str
    kind: str  # text | string | choice | decimal | evidence_ref
    required: bool
    max_length: int | None
    choices: list[str]
    value: str
    errors: list[str] = field(default_factory=list)


@dataclass
class ResolutionOption:
    resolution: Resolution
    inputs: list[SchemaInput]
    selected: bool


def resolution_options(
    resolutions: list[Resolution],
    *,
    evidence_refs: list[str],
    selected: str,
    values: dict[str, str],
    errors: dict[str, list[str]],
) -> list[ResolutionOption]:
    """`values` maps input names to what the worker typed (posted or drafted); `errors`
    maps the service's field paths ("fields.po_number") of the selected resolution."""
    options = []
    for resolution in resolutions:
        inputs = []
        for spec in resolution.field_schema:
            kind = spec.get("type", "string")
            inputs.append(
                SchemaInput(
                    name=spec["name"],
                    input_name=field_input_name(resolution.code, spec["name"]),
                    label=spec.get("label", spec["name"]),
                    kind=kind,
                    required=bool(spec.get("required")),
                    max_length=spec.get("max_length"),
                    choices=[str(c) for c in spec.get("choices", [])]
                    if kind == "choice"
                    else evidence_refs
                    if kind == "evidence_ref"
                    else [],
                    value=values.get(field_input_name(resolution.code, spec["name"]), ""),
                    errors=errors.get(f"fields.{spec['name']}", [])
                    if resolution.code == selected
                    else [],
                )
            )
        options.append(
            ResolutionOption(
                resolution=resolution, inputs=inputs, selected=resolution.code == selected
            )
        )
    return options


# --- Supervisor actions (board and decision page) ---------------------------------------
# The services validate the business rules again (band, expiry window, reason); the forms
# shape the input and give each field the label and error the page shows next to it.

BAND_CHOICES = [("P1", "P1"), ("P2", "P2"), ("P3", "P3"), ("P4", "P4")]
CLEAR_OVERRIDE = "clear"
DATETIME_INPUT_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"]


class LocalDateTimeField(forms.DateTimeField):
    """A `datetime-local` input read in the desk's time zone (the hint on the page names it)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("input_formats", DATETIME_INPUT_FORMATS)
        kwargs.setdefault(
            "error_messages", {"invalid": _("Enter a date and time, e.g. 2026-03-14 16:30.")}
        )
        super().__init__(**kwargs)


def _reason_field(label: Any = None) -> forms.CharField:
    return forms.CharField(
        label=label or _("Reason"),
        max_length=300,
        error_messages={"required": _("Give a reason: it is kept in the case's history.")},
    )


class CaseReferenceMixin(forms.Form):
    """On the board a supervisor names the case (id or business reference)."""

    case = forms.CharField(
        label=_("Case id or reference"),
        max_length=200,
        error_messages={"required": _("Name the case: its id or its reference.")},
    )


class TransferForm(forms.Form):
    to_queue = forms.ChoiceField(label=_("To queue"), required=False)
    to_user = forms.ChoiceField(label=_("To worker"), required=False)
    reason = _reason_field()
    note = forms.CharField(label=_("Note for the next owner"), required=False, max_length=2000)

    def __init__(self, *args: Any, queues: list[Queue], workers: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to_queue"].choices = [("", _("Keep the current queue"))] + [
            (queue.name, str(queue)) for queue in queues
        ]
        self.fields["to_user"].choices = [("", _("Nobody: back to the queue"))] + [
            (str(worker.pk), worker.get_username()) for worker in workers
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("to_queue") and not data.get("to_user") and not self.has_error("to_queue"):
            # Shown at the first choice of the "Send it to" group, where the fix is made.
            self.add_error("to_queue", _("Choose a queue, a worker, or both."))
        return data


class BoardTransferForm(CaseReferenceMixin, TransferForm):
    field_order = ["case", "to_queue", "to_user", "reason", "note"]


class RerouteForm(forms.Form):
    to_queue = forms.ChoiceField(
        label=_("Correct queue"),
        error_messages={"required": _("Choose the queue this case belongs in.")},
    )
    reason = _reason_field(_("What was misclassified"))

    def __init__(self, *args: Any, queues: list[Queue], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to_queue"].choices = [("", _("Choose…"))] + [
            (queue.name, str(queue)) for queue in queues
        ]


class PriorityOverrideForm(forms.Form):
    band = forms.ChoiceField(
        label=_("Priority"),
        choices=[*BAND_CHOICES, (CLEAR_OVERRIDE, _("Remove the override"))],
        error_messages={"required": _("Choose a band, or remove the override.")},
    )
    reason = _reason_field()
    expires_at = LocalDateTimeField(label=_("Override ends at"), required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        wants_override = data.get("band") in dict(BAND_CHOICES)
        if wants_override and not data.get("expires_at") and "expires_at" not in self.errors:
            self.add_error("expires_at", _("An override needs an end: give a date and time."))
        return data


class BoardPriorityForm(CaseReferenceMixin, PriorityOverrideForm):
    field_order = ["case", "band", "reason", "expires_at"]


class DueDateForm(forms.Form):
    due_at = LocalDateTimeField(
        label=_("New due date"),
        error_messages={
            "required": _("Give the new due date and time."),
            "invalid": _("Enter a date and time, e.g. 2026-03-14 16:30."),
        },
    )
    reason = _reason_field()


class CapacityForm(forms.Form):
    worker = forms.ChoiceField(
        label=_("Worker"), error_messages={"required": _("Choose the worker.")}
    )
    capacity = forms.IntegerField(
        label=_("Capacity (workload units)"),
        min_value=0,
        max_value=100,
        error_messages={"required": _("Give the capacity in workload units, e.g. 4.")},
    )
    reason = _reason_field()
    expires_at = LocalDateTimeField(
        label=_("Adjustment ends at"),
        error_messages={
            "required": _("Give the end of the adjustment (e.g. the end of the shift)."),
            "invalid": _("Enter a date and time, e.g. 2026-03-14 16:30."),
        },
    )

    def __init__(self, *args: Any, workers: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["worker"].choices = [("", _("Choose…"))] + [
            (str(worker.pk), worker.get_username()) for worker in workers
        ]


class AbsenceForm(forms.Form):
    worker = forms.ChoiceField(
        label=_("Absent worker"), error_messages={"required": _("Choose the absent worker.")}
    )

    def __init__(self, *args: Any, workers: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["worker"].choices = [("", _("Choose…"))] + [
            (str(worker.pk), worker.get_username()) for worker in workers
        ]


# --- Worker: shift and skip ---------------------------------------------------------------


class ShiftForm(forms.Form):
    on_shift = forms.ChoiceField(
        choices=[("on", _("Go on shift")), ("off", _("Go off shift"))],
        widget=forms.HiddenInput,
    )
    handoff_note = forms.CharField(
        label=_("Hand-off note for whoever takes over your cases"),
        required=False,
        max_length=2000,
    )


SKIP_REASONS = [
    ("outside_expertise", _("Outside my expertise")),
    ("conflict_of_interest", _("Possible conflict of interest")),
    ("needs_context", _("Needs someone who knows this entity")),
    ("other", _("Another reason")),
]


class SkipForm(forms.Form):
    """A worker passes a case of a pull queue to a colleague. A fixed list keeps the
    counted reasons comparable in the data."""

    reason = forms.ChoiceField(
        label=_("Why are you skipping this case?"),
        choices=SKIP_REASONS,
        error_messages={"required": _("Choose why you skip this case.")},
    )

    def reason_text(self) -> str:
        return str(dict(SKIP_REASONS)[self.cleaned_data["reason"]])


# --- Shared by the supervisor pages -------------------------------------------------------

# What a new override or capacity adjustment proposes as its end: the rest of a shift.
DEFAULT_EXPIRY = timedelta(hours=8)
DATETIME_LOCAL = "%Y-%m-%dT%H:%M"


def default_expiry() -> str:
    return timezone.localtime(timezone.now() + DEFAULT_EXPIRY).strftime(DATETIME_LOCAL)


def error_summary(form: forms.Form | None, prefix: str) -> list[tuple[str, str]]:
    """(anchor id, message) pairs of a bound form's errors, in field order; the anchors are
    the input ids the templates give (`<prefix>-<field name>`)."""
    if form is None or not form.is_bound or not form.errors:
        return []
    entries = [("", str(message)) for message in form.non_field_errors()]
    for name in form.fields:
        entries.extend((f"{prefix}-{name}", str(message)) for message in form.errors.get(name, []))
    return entries


@dataclass
class SupervisorForms:
    """The forms of the decision page's supervisor panel. A failed one is bound (with its
    errors) and named in `failed`, so its error summary takes focus."""

    transfer: TransferForm
    reroute: RerouteForm
    priority: PriorityOverrideForm
    due: DueDateForm
    failed: str = ""

    @property
    def errors(self) -> list[tuple[str, str]]:
        if not self.failed:
            return []
        return error_summary(getattr(self, self.failed), f"supervise-{self.failed}")


def other_queues(queues: list[Queue], case: Case) -> list[Queue]:
    return [queue for queue in queues if queue.pk != case.queue_id]


def supervisor_forms(user: Any, case: Case, **bound: forms.Form) -> SupervisorForms:
    queues, workers = transfer_targets(user)
    return SupervisorForms(
        transfer=bound.get("transfer")
        or TransferForm(queues=other_queues(queues, case), workers=workers),
        reroute=bound.get("reroute") or RerouteForm(queues=other_queues(reroute_targets(), case)),
        priority=bound.get("priority")
        or PriorityOverrideForm(initial={"expires_at": default_expiry()}),
        due=bound.get("due")
        or DueDateForm(
            initial={"due_at": timezone.localtime(case.due_at).strftime(DATETIME_LOCAL)}
        ),
        failed=next(iter(bound), ""),
    )
