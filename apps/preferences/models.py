"""Per-user page preferences: saved queue views (a named filter set)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class SavedView(models.Model):
    """A worker's named queue filter set, stored as the canonical query string."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    name = models.CharField(_("name"), max_length=80)
    querystring = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="saved_view_user_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user_id})"
