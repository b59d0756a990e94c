"""Every piece of text a user reads in a template goes through Django's translation
machinery ({% translate %} or {% blocktranslate %}), so a translator can reach all of it.
The scanner is checked on small samples first, so a pass on the real tree means something."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from .textscan import template_files, untranslated_text

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def texts(source: str) -> list[str]:
    return [finding.text for finding in untranslated_text(source)]


def test_the_whole_templates_tree_has_no_untranslated_text():
    files = template_files(TEMPLATES)
    assert len(files) >= 10, f"expected the product's templates under {TEMPLATES}"
    findings = [
        finding
        for path in files
        for finding in untranslated_text(
            path.read_text(encoding="utf-8"), path=str(path.relative_to(TEMPLATES))
        )
    ]
    assert not findings, "untranslated text:\n" + "\n".join(str(f) for f in findings)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("<h1>Queue</h1>", ["Queue"]),
        ('<nav aria-label="Main">…</nav>', ["Main"]),
        ('<a title="Open the case" href="{% url "x" %}">{{ ref }}</a>', ["Open the case"]),
        ('<img alt="Logo" src="x.png">', ["Logo"]),
        ('<input type="search" placeholder="Search cases">', ["Search cases"]),
        ('<input type="submit" value="Save">', ["Save"]),
        ('<body data-error-message="It failed">', ["It failed"]),
        ("<p>{{ count }} cases</p>", ["cases"]),
        ('<p>{% if late %}Late{% else %}{% translate "On time" %}{% endif %}</p>', ["Late"]),
        ('<td>{{ value|default:"Not set" }}</td>', ["Not set"]),
        ("<td>{{ value|default:'Unknown' }}</td>", ["Unknown"]),
        ('{% include "x.html#field" with field=f hint="Say why" %}', ["Say why"]),
        ("Case: {{ ref }}", ["Case:"]),
    ],
)
def test_the_scanner_flags_text_outside_translate_tags(source, expected):
    assert texts(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        '<h1>{% translate "Queue" %}</h1>',
        "<nav aria-label=\"{% translate 'Main' %}\">…</nav>",
        "<p>{% blocktranslate count counter=n %}{{ counter }} case{% plural %}"
        "{{ counter }} cases{% endblocktranslate %}</p>",
        '<button>{% blocktranslate with ref=r %}Retry <span class="visually-hidden">'
        "{{ ref }}</span>{% endblocktranslate %}</button>",
        "<td>{{ case.case_ref }} — {{ case.summary }} ({{ case.due_at|due_in }})</td>",
        '<td>{{ value|default:"—" }}</td>',
        "<html lang=\"{{ LANGUAGE_CODE|default:'en' }}\">",
        '{% include "x.html#field" with field=f input_id="board-case" kind="text" '
        'hint=_("Say why") %}',
        "{# A note for developers #}<p>{{ x }}</p>",
        "{% comment %}Developer notes{% endcomment %}",
        '<time datetime="{{ at|date:"c" }}">{{ at|date:"j M Y, H:i T" }}</time>',
        '<script>var label = "not for readers";</script>',
        '<input type="hidden" name="state" value="open">',
    ],
)
def test_the_scanner_accepts_translated_text_and_data(source):
    assert texts(source) == []


def test_the_scanner_reports_the_line_of_the_untranslated_text():
    source = '{% load i18n %}\n{# two\nlines #}\n<p>{% translate "Fine" %}</p>\n<p>Not fine</p>\n'

    [finding] = untranslated_text(source, path="sample.html")

    assert (finding.path, finding.line, finding.text) == ("sample.html", 5, "Not fine")
