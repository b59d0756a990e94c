"""Finds text a user would read in a Django template that does not go through the
translation machinery. A deliberately small parser, not a template engine:

1. comments go, and so does everything a translate tag produces ({% translate %},
   {% blocktranslate %}…{% endblocktranslate %}, `_("…")` arguments): that text is
   translated;
2. the remaining template tags and variables go (their output is data or comes from
   Python, which tests/i18n/test_python_strings.py checks), except string literals they
   would print: `|default:"…"` and `key="…"` arguments of {% include %} with words in them;
3. what is left is parsed as HTML: any letter in a text node, or in an attribute a user
   hears or sees (aria-label, title, alt, placeholder, …), is untranslated text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

COMMENT_BLOCK = re.compile(r"{%\s*comment\b.*?%}.*?{%\s*endcomment\s*%}", re.DOTALL)
COMMENT_LINE = re.compile(r"{#.*?#}", re.DOTALL)
BLOCKTRANSLATE = re.compile(
    r"{%\s*blocktrans(?:late)?\b.*?%}.*?{%\s*endblocktrans(?:late)?\s*%}", re.DOTALL
)
TRANSLATE = re.compile(r"{%\s*trans(?:late)?\s.*?%}", re.DOTALL)
TAG = re.compile(r"{%.*?%}", re.DOTALL)
VARIABLE = re.compile(r"{{.*?}}", re.DOTALL)
GETTEXT_LITERAL = re.compile(r"""_\(\s*(?:"[^"]*"|'[^']*')\s*\)""")
DEFAULT_LITERAL = re.compile(r"""\|default(?:_if_none)?:(?:"([^"]*)"|'([^']*)')""")
INCLUDE_ARGUMENT = re.compile(r"""\b[\w.]+=(?:"([^"]*)"|'([^']*)')""")
SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)

# Attributes whose value is read out or shown to a user.
READ_ATTRIBUTES = {
    "aria-label",
    "aria-description",
    "aria-placeholder",
    "aria-roledescription",
    "aria-valuetext",
    "title",
    "alt",
    "placeholder",
    "label",
}
# Input types whose `value` is the text on the button.
BUTTON_INPUTS = {"submit", "button", "reset"}
# data-* attributes the page's script shows or announces (data-error-message, …).
MESSAGE_DATA = re.compile(r"^data-[\w-]*message$")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    where: str  # "text" or the attribute's name
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.where}: {self.text!r}"


def _has_words(text: str) -> bool:
    return any(character.isalpha() for character in text)


def _keep_lines(match: re.Match[str]) -> str:
    """Blank out a match but keep its newlines, so reported line numbers stay true."""
    return "\n" * match.group(0).count("\n")


def _printed_literals(tag: str) -> list[str]:
    """String literals a template tag or variable would print as they are."""
    tag = GETTEXT_LITERAL.sub("", tag)
    found = [a or b for a, b in DEFAULT_LITERAL.findall(tag)]
    if re.match(r"{%\s*include\b", tag):
        found += [a or b for a, b in INCLUDE_ARGUMENT.findall(tag)]
    # Codes, ids, kinds and template names ("en", "select", "board-case") are lower case
    # without spaces; text meant for a reader has a space or a capital.
    return [
        literal
        for literal in found
        if _has_words(literal) and (" " in literal or literal != literal.lower())
    ]


class _TextParser(HTMLParser):
    def __init__(self, path: str) -> None:
        super().__init__(convert_charrefs=True)
        self.path = path
        self.findings: list[Finding] = []

    def _report(self, where: str, text: str) -> None:
        self.findings.append(Finding(self.path, self.getpos()[0], where, text.strip()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for name, value in values.items():
            read = name in READ_ATTRIBUTES or MESSAGE_DATA.match(name)
            if tag == "input" and name == "value" and values.get("type") in BUTTON_INPUTS:
                read = True
            if read and _has_words(value):
                self._report(name, value)

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        if _has_words(data):
            self._report("text", data)


def untranslated_text(source: str, *, path: str = "<template>") -> list[Finding]:
    """Every piece of user-facing text in `source` that is not translated."""
    source = COMMENT_BLOCK.sub(_keep_lines, source)
    source = COMMENT_LINE.sub(_keep_lines, source)
    source = BLOCKTRANSLATE.sub(_keep_lines, source)
    source = TRANSLATE.sub(_keep_lines, source)
    findings: list[Finding] = []

    def strip_tag(match: re.Match[str]) -> str:
        line = source.count("\n", 0, match.start()) + 1
        for literal in _printed_literals(match.group(0)):
            findings.append(Finding(path, line, "literal in a tag", literal))
        return _keep_lines(match)

    source = TAG.sub(strip_tag, source)
    source = VARIABLE.sub(strip_tag, source)
    source = SCRIPT_OR_STYLE.sub(_keep_lines, source)
    parser = _TextParser(path)
    parser.feed(source)
    parser.close()
    return findings + parser.findings


def template_files(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and path.suffix in {".html", ".txt", ".xml"}
    )
