"""The page scripts say nothing in English of their own: what they show or announce comes
from the translated page (data-*-message attributes) or from the server's translated
answers. A string literal of two or more words in a script is text that no translator
could reach."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

SCRIPTS = Path(settings.BASE_DIR) / "static"
# Strings and comments in one pass, so a quote inside a comment or a "//" inside a string
# is read as what it is.
TOKEN = re.compile(
    r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/""",
    re.DOTALL,
)
# Words separated by spaces, starting with a capital or ending a sentence ("Draft saved",
# "not saved."); event names ("htmx:afterSettle") and selectors ("details summary") are not.
WORDS = re.compile(r"^.[A-Z][A-Za-z]*[,.;:]?\s+[A-Za-z]{2,}|[A-Za-z]{2,}\s+[A-Za-z]{2,}[.!?].$")
DIRECTIVES = {'"use strict"', "'use strict'"}


def prose_literals(source: str) -> list[str]:
    return [
        token
        for token in TOKEN.findall(source)
        if not token.startswith("/") and token not in DIRECTIVES and WORDS.search(token)
    ]


def test_page_scripts_have_no_text_of_their_own():
    scripts = sorted(SCRIPTS.rglob("*.js"))
    assert scripts, f"expected the page scripts under {SCRIPTS}"
    found = {
        str(script.relative_to(SCRIPTS)): literals
        for script in scripts
        if (literals := prose_literals(script.read_text(encoding="utf-8")))
    }
    assert not found, f"texts that bypass translation: {found}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('announce("Draft saved");', ['"Draft saved"']),
        ("region.textContent = 'Changed by another';", ["'Changed by another'"]),
        ('fetch(`/cases/${id}`); // a comment\'s "quoted words"', []),
        ('announce("not saved yet.");', ['"not saved yet."']),
        ('"use strict"; announce(document.body.dataset.errorMessage);', []),
        ('document.addEventListener("htmx:afterSettle", focus);', []),
        ('root.querySelectorAll("details summary");', []),
        ('el.querySelector("[data-resolution-fields]"); // "Not text"', []),
        ('headers: {"Content-Type": "application/x-www-form-urlencoded"}', []),
    ],
)
def test_the_script_scan_flags_words_and_passes_code(source, expected):
    assert prose_literals(source) == expected
