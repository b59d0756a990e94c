"""Forms of the worker pages. They parse and shape input; the services validate the
business rules (field schemas, leases, versions) and the views map their errors back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from apps.routing.models import ExceptionClass, Queue, Resolution

from .models import SideEffectState, State
from .selectors import ANY_STATE, DEFAULT_SORT, SORT_ORDERINGS, QueueFilters

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
