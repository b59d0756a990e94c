"""The "History" link in the navigation, for readers of the audit history."""

from __future__ import annotations

from django import template

from ..views.audit import reads_history

register = template.Library()


@register.simple_tag(takes_context=True)
def reads_audit_history(context: template.Context) -> bool:
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return False
    return reads_history(request.user)
