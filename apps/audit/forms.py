"""The auditor history's filter form (GET): stream or case, action, actor, date range."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .selectors import HistoryFilters


class HistoryFilterForm(forms.Form):
    stream = forms.CharField(
        label=_("Case or stream"),
        required=False,
        max_length=80,
        help_text=_(
            "A case id or reference, or a configuration stream such as config:routing.queue."
        ),
    )
    # Not "action": a control of that name would shadow form.action in the DOM, which
    # static/js/app.js reads to restore focus after the reload.
    action_type = forms.CharField(label=_("Action"), required=False, max_length=64)
    actor = forms.CharField(label=_("Actor"), required=False, max_length=150)
    date_from = forms.DateField(label=_("From date"), required=False)
    date_to = forms.DateField(label=_("To date"), required=False)

    def clean(self) -> dict:
        cleaned = super().clean()
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", _("The end date is before the start date."))
        return cleaned

    def filters(self) -> HistoryFilters:
        """What the valid fields say; a field with an error filters nothing."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return HistoryFilters(
            stream=(data.get("stream") or "").strip(),
            action=(data.get("action_type") or "").strip(),
            actor=(data.get("actor") or "").strip(),
            date_from=data.get("date_from") if "date_to" not in self.errors else None,
            date_to=data.get("date_to") if "date_to" not in self.errors else None,
        )
