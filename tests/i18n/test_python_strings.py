"""Python strings a user reads (error messages shown on pages, flash messages, live-region
announcements, form labels, choices and field errors) are marked for translation. The
scanner is tried on samples first, so a clean scan of apps/ means something."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from .pyscan import product_modules, untranslated_strings

APPS = Path(settings.BASE_DIR) / "apps"
# The JSON API is read by workflow engines, not people; its errors and its OpenAPI
# descriptions stay English (the API tests pin them). The pages never show them.
MACHINE_FACING = {"api"}


# Known gaps in files this work may not touch (models.py changes belong to the lead): each
# entry must still be found, so it is removed from here once fixed.
def scan() -> list:
    findings = []
    for path in product_modules(APPS):
        relative = path.relative_to(APPS)
        if MACHINE_FACING.intersection(relative.parts[1:2]):
            continue
        findings += untranslated_strings(path.read_text(encoding="utf-8"), path=str(relative))
    return findings


def test_user_facing_python_strings_go_through_gettext():
    findings = scan()

    assert not findings, "untranslated strings:\n" + "\n".join(str(f) for f in findings)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('raise CaseError("conflict", "The case changed.", case=case)', ["The case changed."]),
        ('raise CaseError.invalid("note", f"{label} is required.")', ["{…} is required."]),
        ('raise PermissionDenied("Only supervisors.")', ["Only supervisors."]),
        ('messages.success(request, "Saved %s." % name)', ["Saved %s."]),
        ('announce(response, "Draft saved")', ["Draft saved"]),
        ('name = forms.CharField(label="Name this view")', ["Name this view"]),
        (
            'x = forms.CharField(error_messages={"required": "Give a reason."})',
            ["Give a reason."],
        ),
        ('s = forms.ChoiceField(choices=[("on", "Go on shift")])', ["Go on shift"]),
        ('errors["question"] = ["Say what is needed."]', ["Say what is needed."]),
    ],
)
def test_the_scanner_flags_bare_strings_where_users_read_them(source, expected):
    assert [finding.text for finding in untranslated_strings(source)] == expected


@pytest.mark.parametrize(
    "source",
    [
        'raise CaseError("conflict", _("The case changed."), case=case)',
        'raise CaseError.invalid("note", _("%(label)s is required.") % {"label": label})',
        'messages.success(request, ngettext("%(n)d case", "%(n)d cases", n) % {"n": n})',
        'name = forms.CharField(label=_("Name this view"))',
        'BANDS = forms.ChoiceField(choices=[("P1", "P1"), ("P2", "P2")])',
        'raise CaseError("conflict", message, case=case)',
        'raise CaseError("forbidden", " ".join(reason.for_you for reason in reasons))',
        'logger.info("Relayed %s to the workflow", event)',
    ],
)
def test_the_scanner_accepts_translated_strings_codes_and_logs(source):
    assert untranslated_strings(source) == []
