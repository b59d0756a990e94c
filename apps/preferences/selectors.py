from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from .models import SavedView


def saved_views_of(user: Any) -> QuerySet[SavedView]:
    return SavedView.objects.filter(user=user).order_by("name")
