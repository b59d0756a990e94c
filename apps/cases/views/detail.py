"""The decision page and the actions on it. Each action: parse the form, access, one
service call, then redirect (or render the errors with the status that says why)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.template.defaultfilters import date as format_date
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from apps.routing.models import Resolution

from .. import selectors, services
from ..errors import CaseError
from ..forms import (
    DecisionForm,
    DraftForm,
    LeaseForm,
    ReconcileForm,
    RecordAnswerForm,
    RequestInformationForm,
    field_input_name,
    posted_fields,
    resolution_options,
)
from ..models import Case, Decision
from .common import (
    STATUS_OF_KIND,
    HtmxHttpRequest,
    access,
    access_for_work,
    announce,
    case_url,
    login_required_page,
    raise_http,
    redirect_after_post,
)

TIME_FORMAT = "H:i T"


@dataclass
class DecisionPanel:
    """What the decision form shows: the worker's values (posted or drafted), the hidden
    concurrency fields as the page was loaded, errors, and a pending confirmation or
    conflict."""

    expected_version: int
    lease_token: str
    evidence_digest: str
    selected: str = ""
    values: dict[str, str] = field(default_factory=dict)
    note: str = ""
    errors: dict[str, list[str]] = field(default_factory=dict)
    message: str = ""
    confirm: Resolution | None = None
    conflict_message: str = ""
    conflict_decision: Decision | None = None

    @classmethod
    def from_post(cls, data: QueryDict, case: Case) -> DecisionPanel:
        # The concurrency fields are echoed as they were posted, never refreshed from the
        # database: a re-rendered form must still fail if the case moved on meanwhile.
        try:
            version = int(data.get("expected_version", ""))
        except ValueError:
            version = case.version
        return cls(
            expected_version=version,
            lease_token=data.get("lease_token", ""),
            evidence_digest=data.get("evidence_digest", ""),
            selected=data.get("resolution", ""),
            values={key: value for key, value in data.items() if key.startswith("field-")},
            note=data.get("note", ""),
        )


def _initial_panel(case: Case, page: selectors.CasePage) -> DecisionPanel:
    panel = DecisionPanel(
        expected_version=case.version,
        lease_token=case.lease_token if page.holds_lease else "",
        evidence_digest=case.evidence_digest,
    )
    if page.draft is not None:
        # A draft restores what the worker typed; it is never a decision.
        panel.selected = page.draft.resolution
        panel.note = page.draft.note
        panel.values = {
            field_input_name(page.draft.resolution, name): str(value)
            for name, value in (page.draft.fields or {}).items()
        }
    return panel


def _error_summary(panel: DecisionPanel, options: list[Any]) -> list[tuple[str, str]]:
    """(anchor id, message) pairs for the error summary, in the order of the form."""
    entries: list[tuple[str, str]] = []
    first_choice = f"resolution-{options[0].resolution.code}" if options else ""
    for message in panel.errors.get("resolution", []):
        entries.append((first_choice, message))
    for option in options:
        for schema_input in option.inputs:
            anchor = (
                f"{schema_input.input_name}-0"
                if schema_input.kind == "evidence_ref"
                else schema_input.input_name
            )
            entries.extend((anchor, message) for message in schema_input.errors)
    for message in panel.errors.get("note", []):
        entries.append(("decision-note", message))
    known = {"resolution", "note"}
    for path, path_messages in panel.errors.items():
        if path not in known and not path.startswith("fields."):
            entries.extend(("", message) for message in path_messages)
    return entries


def _render_case(
    request: HtmxHttpRequest,
    case: Case,
    *,
    status: int = 200,
    partial: str = "",
    panel: DecisionPanel | None = None,
    action_error: str = "",
    **forms: Any,
) -> HttpResponse:
    page = selectors.case_page(request.user, case)
    panel = panel or _initial_panel(case, page)
    options = resolution_options(
        page.decidable_resolutions,
        evidence_refs=page.evidence_refs,
        selected=panel.selected,
        values=panel.values,
        errors=panel.errors,
    )
    context = {
        "nav": "queue",
        "page": page,
        "case": case,
        "draft": page.draft,
        "panel": panel,
        "options": options,
        "error_summary": _error_summary(panel, options),
        # Single use: every render of the form carries a new id, so a resubmission of
        # this very form replays its first answer and a new attempt is a new command.
        "resolution_id": str(uuid.uuid4()),
        "action_error": action_error,
        "request_information_form": forms.get("request_information_form")
        or RequestInformationForm(),
        "answer_form": forms.get("answer_form") or RecordAnswerForm(),
        "reconcile_form": forms.get("reconcile_form") or ReconcileForm(),
        # The supervisor panel's forms after a failed action (views/supervisor.py); the
        # panel builds blank ones otherwise.
        "supervisor_forms": forms.get("supervisor_forms"),
    }
    template = "cases/detail.html"
    if partial and request.htmx:
        template = f"cases/detail.html#{partial}"
    return render(request, template, context, status=status)


def _action_failed(
    request: HtmxHttpRequest, case_id: str, error: CaseError, **forms: Any
) -> HttpResponse:
    """A refused action: 404/403 as such; a conflict or invalid input re-renders the page
    (freshly read) with the reason and the status that names it."""
    if error.kind not in STATUS_OF_KIND:
        raise_http(error)
    for form in forms.values():
        for path, path_messages in error.fields.items():
            target = path if path in form.fields else None
            for message in path_messages:
                form.add_error(target, message)
    return _render_case(
        request,
        access(request.user, case_id),
        status=STATUS_OF_KIND[error.kind],
        action_error=error.message,
        **forms,
    )


@login_required_page
@require_safe
@vary_on_headers("HX-Request")
def case_detail(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    return _render_case(request, access(request.user, case_id))


@login_required_page
@require_POST
def claim(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    try:
        case = services.claim_case(case_id=case_id, actor=request.user)
    except CaseError as error:
        return _action_failed(request, case_id, error)
    messages.success(
        request,
        _("You claimed this case. Your lease runs until %(time)s.")
        % {"time": format_date(case.lease_expires_at, TIME_FORMAT)},
    )
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def release(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    form = LeaseForm(request.POST)
    form.is_valid()
    try:
        services.release_case(
            case_id=case_id,
            actor=request.user,
            lease_token=form.cleaned_data.get("lease_token", ""),
        )
    except CaseError as error:
        return _action_failed(request, case_id, error)
    messages.success(request, _("You released this case; it is back in the queue."))
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
@vary_on_headers("HX-Request")
def renew(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    """Called on the worker's activity (static/js/app.js) or the "Keep working" button.
    HTMX and script calls get the lease-expiry partial; a plain form post redirects."""
    access_for_work(request.user, case_id)
    form = LeaseForm(request.POST)
    form.is_valid()
    try:
        case = services.renew_lease(
            case_id=case_id,
            actor=request.user,
            lease_token=form.cleaned_data.get("lease_token", ""),
        )
    except CaseError as error:
        if error.kind != "conflict" or not request.htmx:
            return _action_failed(request, case_id, error)
        response = _render_case(
            request, access(request.user, case_id), status=409, partial="lease-expiry"
        )
        return announce(response, error.message)
    if not request.htmx:
        messages.success(
            request,
            _("Your lease now runs until %(time)s.")
            % {"time": format_date(case.lease_expires_at, TIME_FORMAT)},
        )
        return redirect_after_post(request, case_url(case_id))
    response = _render_case(request, case, partial="lease-expiry")
    if request.POST.get("announce"):
        announce(
            response,
            _("Lease extended until %(time)s.")
            % {"time": format_date(case.lease_expires_at, TIME_FORMAT)},
        )
    return response


@login_required_page
@require_POST
@vary_on_headers("HX-Request")
def save_draft(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    """Autosave: stores what the worker typed. Never a decision; the case is unchanged."""
    case = access_for_work(request.user, case_id)
    form = DraftForm(request.POST)
    form.is_valid()
    chosen = form.cleaned_data.get("resolution", "")
    resolution = next((r for r in case.exception_class.resolutions.all() if r.code == chosen), None)
    try:
        draft = services.save_draft(
            case_id=case_id,
            actor=request.user,
            resolution=chosen,
            fields=posted_fields(request.POST, resolution),
            note=form.cleaned_data.get("note", ""),
        )
    except CaseError as error:
        raise_http(error)
    if not request.htmx:
        messages.success(
            request,
            _("Draft saved at %(time)s. It is not a decision.")
            % {"time": format_date(draft.saved_at, TIME_FORMAT)},
        )
        return redirect_after_post(request, case_url(case_id))
    return render(request, "cases/detail.html#draft-status", {"draft": draft})


@login_required_page
@require_POST
@vary_on_headers("HX-Request")
def decide(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    case = access_for_work(request.user, case_id)
    panel = DecisionPanel.from_post(request.POST, case)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        panel.errors = {name: list(errors) for name, errors in form.errors.items()}
        panel.message = _("The form was incomplete. Reload the case and try again.")
        return _render_case(request, case, status=422, partial="decision-form", panel=panel)
    data = form.cleaned_data
    chosen = next(
        (r for r in services.allowed_resolutions(case) if r.code == data["resolution"]), None
    )
    if chosen is not None and chosen.irreversible and not data["confirm"]:
        # Irreversible: ask in context first. Nothing is recorded until the confirmation.
        panel.confirm = chosen
        return _render_case(request, case, partial="decision-form", panel=panel)
    try:
        services.decide_case(
            case_id=case_id,
            actor=request.user,
            expected_version=data["expected_version"],
            lease_token=data["lease_token"],
            resolution=data["resolution"],
            fields=posted_fields(request.POST, chosen),
            note=data["note"],
            resolution_id=data["resolution_id"],
            evidence_digest=data["evidence_digest"],
        )
    except CaseError as error:
        if error.kind == "invalid":
            panel.errors = error.fields or {"": [error.message]}
            panel.message = error.message
            return _render_case(request, case, status=422, partial="decision-form", panel=panel)
        if error.kind == "conflict":
            panel.conflict_message = error.message
            panel.conflict_decision = selectors.accepted_decision(case_id)
            return _render_case(
                request,
                access(request.user, case_id),
                status=409,
                partial="decision-form",
                panel=panel,
            )
        raise_http(error)
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def request_information(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    form = RequestInformationForm(request.POST)
    if not form.is_valid():
        return _render_case(
            request, access(request.user, case_id), status=422, request_information_form=form
        )
    try:
        services.request_information(
            case_id=case_id,
            actor=request.user,
            expected_version=form.cleaned_data["expected_version"],
            lease_token=form.cleaned_data["lease_token"],
            question=form.cleaned_data["question"],
            asked_of=form.cleaned_data["asked_of"],
        )
    except CaseError as error:
        return _action_failed(request, case_id, error, request_information_form=form)
    messages.success(request, _("Information requested. The case now waits for the answer."))
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def record_answer(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    form = RecordAnswerForm(request.POST)
    form.is_valid()
    try:
        services.record_answer(
            case_id=case_id, actor=request.user, answer=form.cleaned_data.get("answer", "")
        )
    except CaseError as error:
        return _action_failed(request, case_id, error, answer_form=form)
    messages.success(request, _("Answer recorded. The case is open again."))
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def reconcile(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    form = ReconcileForm(request.POST)
    if not form.is_valid():
        return _render_case(request, access(request.user, case_id), status=422, reconcile_form=form)
    try:
        services.reconcile_side_effect(
            case_id=case_id,
            actor=request.user,
            expected_version=form.cleaned_data["expected_version"],
            state=form.cleaned_data["state"],
            provider_record=form.cleaned_data["provider_record"],
        )
    except CaseError as error:
        return _action_failed(request, case_id, error, reconcile_form=form)
    messages.success(request, _("Side effect reconciled."))
    return redirect_after_post(request, case_url(case_id))
