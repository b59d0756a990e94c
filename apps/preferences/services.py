"""Saving and deleting a user's queue views. Only the owner can touch a view."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist

from .models import SavedView


def save_view(*, user: Any, name: str, querystring: str) -> SavedView:
    """Create the named view, or overwrite the filters of the user's view of that name."""
    view, _ = SavedView.objects.update_or_create(
        user=user, name=name.strip()[:80], defaults={"querystring": querystring[:1000]}
    )
    return view


def delete_view(*, user: Any, view_id: int) -> None:
    """Raise ObjectDoesNotExist when the view is not the user's (its existence is not
    revealed to anyone else)."""
    deleted, _ = SavedView.objects.filter(user=user, pk=view_id).delete()
    if not deleted:
        raise ObjectDoesNotExist("No such saved view.")
