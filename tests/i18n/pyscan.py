"""Finds Python strings that reach a user's screen without going through gettext: the
messages of CaseError, PermissionDenied and Http404 (shown on the error and decision
pages), messages-framework texts, live-region announcements, form labels, choices and
error messages, and field errors handed to CaseError. A string counts as translated when
it is the argument of a gettext call (`_("…")`, `gettext`, `ngettext`, `gettext_lazy`,
`pgettext`…), also when that call is then %-formatted."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

GETTEXT_NAMES = {
    "_",
    "gettext",
    "gettext_lazy",
    "ngettext",
    "ngettext_lazy",
    "pgettext",
    "pgettext_lazy",
    "npgettext",
    "npgettext_lazy",
}
# Call name -> the position of its user-facing message argument.
MESSAGE_ARGUMENT = {
    "CaseError": 1,
    "CaseError.invalid": 1,
    "PermissionDenied": 0,
    "Http404": 0,
    "ValidationError": 0,
    "forms.ValidationError": 0,
    "messages.success": 1,
    "messages.info": 1,
    "messages.warning": 1,
    "messages.error": 1,
    "messages.debug": 1,
    "messages.add_message": 2,
    "announce": 1,
    "self.message_user": 1,
    "self.add_error": 1,
    "form.add_error": 1,
}
LABEL_KEYWORDS = {"label", "help_text", "empty_label", "description", "verbose_name"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    where: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.where}: {self.text!r}"


def is_prose(text: str) -> bool:
    """Words for a reader, as opposed to codes and keys ("select_po", "P1", "open")."""
    has_lower = any(character.islower() for character in text)
    return has_lower and (" " in text.strip() or any(c.isupper() for c in text))


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _untranslated(node: ast.AST | None) -> str | None:
    """The literal text of `node` if it is a bare (or f-, or %-formatted) string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if is_prose(node.value) else None
    if isinstance(node, ast.JoinedStr):
        text = "".join(
            part.value if isinstance(part, ast.Constant) else "{…}" for part in node.values
        )
        return text if is_prose(text) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return _untranslated(node.left) or _untranslated(node.right)
    if isinstance(node, ast.Call) and _dotted(node.func).endswith(".format"):
        return _untranslated(node.func.value)  # type: ignore[attr-defined]
    if isinstance(node, ast.Call) and _dotted(node.func).endswith(".join"):
        return None  # joined messages are checked where each part is made
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.findings: list[Finding] = []

    def _check(self, node: ast.AST | None, where: str) -> None:
        text = _untranslated(node)
        if text is not None:
            self.findings.append(Finding(self.path, getattr(node, "lineno", 0), where, text))

    def _check_messages(self, node: ast.AST, where: str) -> None:
        """A list of messages, or a dict of them (error_messages, fields=…)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                self._check(element, where)
        elif isinstance(node, ast.Dict):
            for value in node.values:
                if isinstance(value, (ast.List, ast.Tuple, ast.Dict)):
                    self._check_messages(value, where)
                else:
                    self._check(value, where)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name.split(".")[-1] in GETTEXT_NAMES:
            return  # its arguments are what gets translated
        position = MESSAGE_ARGUMENT.get(name)
        if position is not None:
            if len(node.args) > position:
                self._check(node.args[position], f"{name}() message")
            for keyword in node.keywords:
                if keyword.arg == "message":
                    self._check(keyword.value, f"{name}() message")
        for keyword in node.keywords:
            if keyword.arg in LABEL_KEYWORDS:
                self._check(keyword.value, f"{keyword.arg}=")
            elif keyword.arg == "error_messages":
                self._check_messages(keyword.value, "error_messages=")
            elif keyword.arg == "fields" and name.startswith("CaseError"):
                self._check_messages(keyword.value, "CaseError fields=")
            elif keyword.arg == "choices" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                for choice in keyword.value.elts:
                    if isinstance(choice, ast.Tuple) and len(choice.elts) == 2:
                        self._check(choice.elts[1], "choice label")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # errors["note"] = ["…"]: field errors collected for a CaseError(fields=errors).
        for target in node.targets:
            if isinstance(target, ast.Subscript) and _dotted(target.value).endswith("errors"):
                self._check_messages(node.value, "field error")
        self.generic_visit(node)


def untranslated_strings(source: str, *, path: str = "<module>") -> list[Finding]:
    visitor = _Visitor(path)
    visitor.visit(ast.parse(source))
    return visitor.findings


def product_modules(root: Path) -> list[Path]:
    """The product's Python code that talks to people: views, forms, services, access,
    template tags, routing explanations, admin. Not migrations (historic snapshots), demo
    data or management commands (operators' consoles)."""
    skip = {"migrations", "demo", "management"}
    return sorted(
        path for path in root.rglob("*.py") if not skip.intersection(path.relative_to(root).parts)
    )
