"""Configuration changes made in the admin write an audit event in the same transaction
(the admin's change view already runs inside transaction.atomic)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms.models import model_to_dict

from .services import Actor, record


def _plain(obj: Any) -> dict[str, Any]:
    return {k: v for k, v in model_to_dict(obj).items() if k not in {"signing_secret", "key_hash"}}


class AuditedModelAdmin(admin.ModelAdmin):
    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        before = _plain(type(obj).objects.get(pk=obj.pk)) if change and obj.pk else {}
        super().save_model(request, obj, form, change)
        record(
            stream=f"config:{obj._meta.label_lower}",
            actor=Actor.user(request.user),
            action="config.changed" if change else "config.created",
            before={"id": obj.pk, **before} if change else {},
            after={"id": obj.pk, **_plain(obj)},
        )

    def delete_model(self, request: Any, obj: Any) -> None:
        before = {"id": obj.pk, **_plain(obj)}
        super().delete_model(request, obj)
        record(
            stream=f"config:{obj._meta.label_lower}",
            actor=Actor.user(request.user),
            action="config.deleted",
            before=before,
        )
